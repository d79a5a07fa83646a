// SPDX-License-Identifier: GPL-3.0-or-later
// Read-back check of a freshly written image, before it is published
// (issue 5: "verify the super block and tables by reading them back").
#include "common/error.h"
#include "sqsh/sqsh.h"

namespace trainimg::sqsh {

namespace {

class Counter : public Visitor {
 public:
  bool entry(const Node& n) override {
    if (n.type != NodeType::Hardlink) ++inodes;
    return false;
  }
  uint64_t inodes = 0;
};

}  // namespace

ImageInfo verify(int fd, const std::string& name) {
  // Opening reads the super block, compressor options, id, fragment and
  // xattr tables; the walk reads every inode and directory listing.
  Image img(fd, name);
  Counter c;
  img.walk(c);
  if (c.inodes != img.info().inode_count) {
    throw Error(name, "verification failed: the super block counts " + std::to_string(img.info().inode_count) +
                          " inodes, the directory tree reaches " + std::to_string(c.inodes));
  }
  return img.info();
}

}  // namespace trainimg::sqsh
