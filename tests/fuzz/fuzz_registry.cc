// SPDX-License-Identifier: GPL-3.0-or-later
// What a registry sends, without a network. The first byte picks the reader:
//  0-3: an image through `inspect docker://…` from the blob cache. The rest
//       is parts separated by "\n--part--\n": the manifest (or image index)
//       the reference pins, then blobs (manifests, config, layers); each
//       part goes into the cache under its digest, with "@DN@"/"@SN@"
//       replaced by part N's digest and size (fuzz_support.h's link_parts).
//       A digest that is not cached would be fetched from 127.0.0.1:1,
//       which refuses at once (Error, no retries: the first request fails).
//  4: a WWW-Authenticate header;  5: a token server's answer;
//  6: a registry's error body;    7: a `docker://` reference.
#include <fstream>

#include "inspect/inspect.h"
#include "inspect/registry/parse.h"
#include "inspect/registry/reference.h"
#include "inspect/sources/registry_source.h"
#include "inspect/sources/source.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainimg;
  namespace reg = inspect::registry;
  if (size < 1) return 0;
  std::string rest(fuzz::as_view(data + 1, size - 1));
  switch (data[0] % 8) {
    case 4: {
      reg::Challenge c = reg::parse_challenge(rest);
      if (c.scheme.size() > rest.size()) std::abort();
      return 0;
    }
    case 5: (void)reg::parse_token_reply(rest); return 0;
    case 6: (void)reg::registry_message(rest); return 0;
    case 7: try { (void)reg::parse_reference(rest).str();
      } catch (const Error&) {
      }
      return 0;
    default: break;
  }
  static fuzz::ScratchDir dir;
  static const inspect::SourceOptions opt = [] {
    inspect::SourceOptions o;
    o.cache_dir = dir.path();
    o.platform = "linux/amd64";
    o.max_connections = 2;
    return o;
  }();
  dir.clear();
  std::vector<std::string> parts;
  for (auto p : fuzz::split(rest, "\n--part--\n")) parts.emplace_back(p);
  if (parts.size() > 16) return 0;
  std::vector<std::string> digest = fuzz::link_parts(parts);
  std::filesystem::create_directories(dir.path() + "/blobs/sha256");
  for (size_t i = 0; i < parts.size(); ++i)
    std::ofstream(dir.path() + "/blobs/sha256/" + digest[i].substr(7), std::ios::binary) << parts[i];
  try {
    inspect::inspect_image("docker://127.0.0.1:1/fuzz/image@" + digest[0], {}, opt);
  } catch (const Error&) {
  }
  return 0;
}
