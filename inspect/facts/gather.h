// SPDX-License-Identifier: GPL-3.0-or-later
// From one walk of an image to ImageFacts: build_tree() with capture.h's
// want/capture pair, then the facts read off the merged tree.
#pragma once

#include "inspect/facts/facts.h"
#include "inspect/tree.h"

namespace trainimg::inspect::facts {

/// Walks the source once. Throws trainimg::Error on unreadable or hostile
/// image data (from the source); odd file contents become facts or notes.
ImageFacts gather_facts(ImageSource& src);

/// The facts of a tree already built with classify()/capture_file().
ImageFacts facts_from_tree(const ImageDescription& d, const MergedTree& tree);

}  // namespace trainimg::inspect::facts
