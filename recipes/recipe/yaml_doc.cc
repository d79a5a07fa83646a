// SPDX-License-Identifier: GPL-3.0-or-later
#include "recipes/recipe/yaml_doc.h"

#include <charconv>

#include "common/error.h"
#include "recipes/recipe/load.h"
#include "recipes/recipe/schema.h"

namespace trainimg::recipes {

namespace {

struct Segment {
  std::string name;
  bool is_index = false;
  size_t index = 0;
};

bool parse_index(std::string_view s, size_t& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

// "steps[1].env.X" and "steps.1.env.X" both name the same node.
std::vector<Segment> split_path(const std::string& key) {
  std::vector<Segment> out;
  std::string cur;
  auto flush = [&] {
    Segment s;
    s.name = cur;
    s.is_index = parse_index(cur, s.index);
    out.push_back(s);
    cur.clear();
  };
  for (size_t i = 0; i < key.size(); ++i) {
    char c = key[i];
    if (c == '.') {
      flush();
    } else if (c == '[') {
      if (!cur.empty()) flush();
      size_t close = key.find(']', i);
      if (close == std::string::npos) {
        cur = key.substr(i);
        break;
      }
      cur = key.substr(i + 1, close - i - 1);
      flush();
      i = close;
      if (i + 1 < key.size() && key[i + 1] == '.') ++i;
    } else {
      cur += c;
    }
  }
  if (!cur.empty() || out.empty() || key.back() == '.') flush();
  return out;
}

class Splicer {
 public:
  Splicer(YamlDoc& doc, std::string key, std::vector<Diagnostic>& out)
      : doc_(doc), key_(std::move(key)), label_("--set " + key_), out_(out) {}

  void apply(const std::string& value_text) {
    YAML::Node value;
    try {
      value = YAML::Load(value_text);
    } catch (const YAML::Exception& e) {
      return fail("the value is not YAML: " + e.msg);
    }
    auto path = split_path(key_);
    for (const auto& s : path)
      if (s.name.empty()) return fail("empty key segment in '" + key_ + "'");
    try {
      walk(doc_.root, recipe_fields(), path, 0, value);
    } catch (const YAML::Exception& e) {
      fail("cannot set it: " + e.msg);
    }
  }

 private:
  void fail(const std::string& msg, const std::string& hint = {}) {
    Diagnostic d;
    d.rule_id = recipe_schema_rule().id;
    d.file = label_;
    d.message = msg;
    d.hint = hint.empty()
                 ? "--set takes a dotted recipe key (efa.installer, steps.0.env.NAME, steps.NAME.run) "
                   "and a YAML value"
                 : hint;
    out_.push_back(d);
  }

  void splice(YAML::Node parent, const std::string& key, YAML::Node value) {
    parent[key] = value;
    doc_.overrides.push_back({label_, value});
  }

  std::string joined(const std::vector<Segment>& path, size_t upto) {
    std::string s;
    for (size_t i = 0; i <= upto && i < path.size(); ++i) s += (i ? "." : "") + path[i].name;
    return s;
  }

  // `node` is a mapping whose keys are `fields`.
  void walk(YAML::Node node, const std::vector<Field>& fields, const std::vector<Segment>& path, size_t i,
            const YAML::Node& value) {
    const Segment& seg = path[i];
    const Field* f = find_field(fields, seg.name);
    if (!f) {
      std::string guess = suggest(seg.name, fields);
      std::string prefix = i ? joined(path, i - 1) + "." : std::string();
      return fail("unknown key '" + joined(path, i) + "'" +
                  (guess.empty() ? std::string() : " (did you mean '" + prefix + guess + "'?)"));
    }
    bool last = i + 1 == path.size();
    if (!node.IsMap()) node = YAML::Node(YAML::NodeType::Map);
    if (last) return splice(node, seg.name, value);
    YAML::Node child = node[seg.name];
    const Segment& next = path[i + 1];
    switch (f->kind) {
      case FieldKind::Scalar:
      case FieldKind::Command:
        return fail("'" + joined(path, i) + "' is a single value; it has no '" + next.name + "'");
      case FieldKind::Object:
        // Assigning to a yaml-cpp node rebinds it in place, inside the tree.
        if (!child.IsMap()) child = YAML::Node(YAML::NodeType::Map);
        return walk(child, *f->fields, path, i + 1, value);
      case FieldKind::NameMap:
        if (i + 2 != path.size()) return fail("'" + joined(path, i + 1) + "' is a single value");
        if (!child.IsMap()) {
          YAML::Node fresh(YAML::NodeType::Map);
          fresh[next.name] = value;
          return splice(node, seg.name, fresh);
        }
        return splice(child, next.name, value);
      case FieldKind::ScalarList:
      case FieldKind::ObjectList: return walk_list(child, *f, path, i + 1, value);
    }
  }

  void walk_list(YAML::Node list, const Field& f, const std::vector<Segment>& path, size_t i,
                 const YAML::Node& value) {
    const Segment& seg = path[i];
    size_t n = list.IsSequence() ? list.size() : 0;
    size_t at = seg.index;
    if (!seg.is_index) {
      // Steps may be addressed by name: steps.deepep.run.
      bool found = false;
      if (f.key == "steps")
        for (size_t k = 0; k < n && !found; ++k)
          if (const YAML::Node item = list[k]; item.IsMap()) {
            // A step without a name: the lookup gives an invalid node, and
            // asking an invalid node its type throws YAML::InvalidNode.
            const YAML::Node name = item["name"];
            if (!name || !name.IsScalar() || name.Scalar() != seg.name) continue;
            at = k;
            found = true;
          }
      if (!found)
        return fail("'" + std::string(f.key) + "' has no entry '" + seg.name + "'",
                    "address list entries by index (" + std::string(f.key) + ".0)" +
                        (f.key == "steps" ? " or steps by name" : ""));
    } else if (at >= n) {
      return fail("'" + joined(path, i) + "' is out of range: '" + std::string(f.key) + "' has " +
                  std::to_string(n) + (n == 1 ? " entry" : " entries"));
    }
    bool last = i + 1 == path.size();
    if (last) {
      list[at] = value;
      doc_.overrides.push_back({label_, value});
      return;
    }
    if (f.kind == FieldKind::ScalarList) return fail("'" + joined(path, i) + "' is a single value");
    walk(list[at], *f.fields, path, i + 1, value);
  }

  YamlDoc& doc_;
  std::string key_;
  std::string label_;
  std::vector<Diagnostic>& out_;
};

}  // namespace

std::vector<Diagnostic> apply_overrides(YamlDoc& doc, const std::vector<std::string>& overrides) {
  std::vector<Diagnostic> out;
  if (!overrides.empty() && !doc.root.IsMap()) doc.root = YAML::Node(YAML::NodeType::Map);
  for (const auto& o : overrides) {
    size_t eq = o.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error("--set " + o, "--set expects KEY=VALUE, e.g. --set efa.installer=1.49.0");
    Splicer(doc, o.substr(0, eq), out).apply(o.substr(eq + 1));
  }
  return out;
}

}  // namespace trainimg::recipes
