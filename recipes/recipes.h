// SPDX-License-Identifier: GPL-3.0-or-later
// Public header of the recipes library: the Dockerfile model and lint
// (dockerfile.h, lint.h) and the recipe model and renderer (recipe.h).
#pragma once

#include "recipes/dockerfile.h"
#include "recipes/lint.h"
#include "recipes/recipe.h"
