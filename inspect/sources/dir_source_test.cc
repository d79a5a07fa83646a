// SPDX-License-Identifier: GPL-3.0-or-later
#include "inspect/sources/dir_source.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "common/error.h"
#include "inspect/testing/image_builder.h"
#include "inspect/tree.h"

namespace trainimg::inspect {
namespace {

using testing::ImageSpec;
using testing::TempDir;

nlohmann::json read_all(const Entry&, ContentReader& r) {
  std::string s;
  char buf[4096];
  while (size_t n = r.read(buf, sizeof buf)) s.append(buf, n);
  return s;
}

TEST(DirSource, WalksARealRootfsWithoutFollowingSymlinksOut) {
  TempDir tmp;
  ImageSpec img;
  img.layer()
      .dir("/opt/amazon/efa/lib")
      .file("/opt/amazon/efa/lib/libfabric.so.1.18.0", "elf", 0755)
      .hardlink("/opt/amazon/efa/lib/libfabric.so.1", "/opt/amazon/efa/lib/libfabric.so.1.18.0")
      .symlink("/host-etc", "/etc")                      // absolute: the image's /etc, never the host's
      .symlink("/up", "../../../../../../../../../../")  // relative, escaping
      .fifo("/run-fifo");
  testing::write_rootfs(img, tmp / "root");
  auto src = open_dir_source(tmp / "root");
  MergedTree t = build_tree(*src, [](const Entry&) { return true; }, read_all);
  EXPECT_EQ(src->describe().kind, "dir");
  EXPECT_EQ(t.lookup("/host-etc")->type, EntryType::Symlink);
  EXPECT_EQ(t.lookup("/host-etc")->link_target, "/etc");
  EXPECT_FALSE(t.lookup("/host-etc/passwd"));
  EXPECT_EQ(t.children("/up"), std::vector<std::string>{});
  EXPECT_EQ(t.lookup("/run-fifo")->type, EntryType::Fifo);
  // Hard links: the first name in sorted order holds the bytes, the others link to it.
  EXPECT_EQ(t.lookup("/opt/amazon/efa/lib/libfabric.so.1")->type, EntryType::File);
  EXPECT_EQ(t.lookup("/opt/amazon/efa/lib/libfabric.so.1.18.0")->type, EntryType::Hardlink);
  EXPECT_EQ(t.resolve("/opt/amazon/efa/lib/libfabric.so.1.18.0"), "/opt/amazon/efa/lib/libfabric.so.1");
  EXPECT_EQ(t.captured.at("/opt/amazon/efa/lib/libfabric.so.1.18.0"), "elf");
  EXPECT_EQ(t.lookup("/opt/amazon/efa/lib/libfabric.so.1")->mode, 0755u);
  EXPECT_EQ(t.lookup("/opt/amazon/efa/lib/libfabric.so.1")->layer, "dir");
  EXPECT_EQ(t.resolve("/up/opt/amazon/efa/lib/libfabric.so.1.18.0"), "/opt/amazon/efa/lib/libfabric.so.1");
}

TEST(DirSource, MissingDirectoryIsAnErrorNamingIt) {
  TempDir tmp;
  try {
    open_dir_source(tmp / "nope");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostic().file, tmp / "nope");
    EXPECT_NE(e.diagnostic().message.find("No such file or directory"), std::string::npos);
  }
}

}  // namespace
}  // namespace trainimg::inspect
