// SPDX-License-Identifier: GPL-3.0-or-later
#include "recipes/recipe/load.h"

#include <cctype>
#include <filesystem>
#include <set>

#include "common/version.h"
#include "recipes/recipe/schema.h"
#include "recipes/recipe/yaml_doc.h"
#include "recipes/recipes.h"

namespace trainimg::recipes {

namespace {

std::string kind_name(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return "a string";
    default: return "nothing";
  }
}

bool all_of_chars(const std::string& s, bool (*ok)(char)) {
  for (char c : s)
    if (!ok(c)) return false;
  return true;
}
bool is_alnum(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}
bool env_name_char(char c) {
  return is_alnum(c) || c == '_';
}
bool label_char(char c) {
  return is_alnum(c) || c == '.' || c == '-' || c == '_' || c == '/';
}
bool step_name_char(char c) {
  return is_alnum(c) || c == '.' || c == '-' || c == '_';
}
bool image_ref_char(char c) {
  return is_alnum(c) || c == '.' || c == '-' || c == '_' || c == '/' || c == ':' || c == '@';
}
bool apt_char(char c) {
  return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
         c == '+' || c == '.' || c == '-' || c == ':' || c == '=' || c == '~' || c == '*';
}

bool valid_env_name(const std::string& s) {
  return !s.empty() && !std::isdigit(static_cast<unsigned char>(s[0])) && all_of_chars(s, env_name_char);
}

// The YAML node walker. `origin` is empty inside the recipe file and
// "--set KEY" inside an override's subtree.
class Loader {
 public:
  Loader(const SourceFile& src, const YamlDoc& doc, std::string context_dir, std::vector<Diagnostic>& out)
      : src_(src), doc_(doc), context_dir_(std::move(context_dir)), out_(out) {}

  std::optional<Recipe> load();

 private:
  using Node = YAML::Node;

  std::string origin_of(const Node& n, const std::string& parent) const {
    if (!parent.empty()) return parent;
    for (const auto& o : doc_.overrides)
      if (n.is(o.node)) return o.label;
    return {};
  }

  Where at(const Node& n, const std::string& origin) const {
    if (!origin.empty()) return {origin, 0, 0};
    YAML::Mark m = n.Mark();
    if (m.is_null()) return {src_.name(), 0, 0};
    return {src_.name(), m.line + 1, m.column + 1};
  }

  void error(const Where& w, std::string msg, std::string hint, int length = 1) {
    out_.push_back(Finding(recipe_schema_rule(), std::move(msg)).hint(std::move(hint)).at_node(w, length));
  }
  void warning(const Where& w, std::string msg, std::string hint, int length = 1) {
    out_.push_back(Finding(recipe_schema_rule(), std::move(msg))
                       .severity(Severity::Warning)
                       .hint(std::move(hint))
                       .at_node(w, length));
  }

  // Columns a scalar covers on its first line, and where each line of a
  // literal block (`run: |`) starts in the source.
  Text text_of(const Node& n, const std::string& origin);
  std::optional<Text> scalar(const Node& key, const Node& v, const std::string& origin,
                             const std::string& what);
  std::vector<Text> scalar_list(const Node& v, const std::string& origin, const std::string& what);
  std::vector<NamedValue> name_map(const Node& key, const Node& v, const std::string& origin,
                                   const std::string& what, bool (*valid_name)(const std::string&),
                                   const std::string& name_rule);
  // Iterates a mapping's keys, reporting duplicates and unknown keys;
  // calls `f(key, value, origin)` for known ones.
  template <class F>
  void each_field(const Node& map, const std::string& origin, const std::vector<Field>& fields,
                  const std::string& where_name, F&& f);

  void load_efa(const Node& key, const Node& v, const std::string& origin, Recipe& r);
  std::optional<ImageCommand> load_image_command(const Node& key, const Node& v, const std::string& origin,
                                                 const std::string& what);
  void load_steps(const Node& key, const Node& v, const std::string& origin, Recipe& r);
  std::optional<Step> load_step(const Node& v, const std::string& origin, size_t index);
  std::vector<CopySpec> load_copy(const Node& key, const Node& v, const std::string& origin,
                                  const std::string& step);
  void check_version(const Text& t);

  const SourceFile& src_;
  const YamlDoc& doc_;
  std::string context_dir_;
  std::vector<Diagnostic>& out_;
};

Text Loader::text_of(const Node& n, const std::string& origin) {
  Text t;
  t.value = n.Scalar();
  t.where = at(n, origin);
  size_t nl = t.value.find('\n');
  std::string first = t.value.substr(0, nl);
  t.length = static_cast<int>(first.size());
  if (!origin.empty() || t.where.line == 0) return t;
  YAML::Mark m = n.Mark();
  char lead = m.pos >= 0 && static_cast<size_t>(m.pos) < src_.text().size() ? src_.text()[m.pos] : '\0';
  if (lead == '"' || lead == '\'') {
    t.length += 2;
    if (nl == std::string::npos) t.lines.push_back({t.where.file, t.where.line, t.where.column + 1});
  } else if (lead == '|') {
    // Literal block: value line k is source line (mark line + 1 + k), all
    // at the block's indentation. Verify each line; any mismatch (tabs,
    // escapes) drops the per-line map rather than guess.
    t.length = 1;
    std::string_view body = t.value;
    int line = t.where.line + 1;
    int indent = -1;
    while (!body.empty()) {
      size_t e = body.find('\n');
      std::string_view piece = body.substr(0, e);
      std::string_view src_line = src_.line_text(line);
      if (indent < 0 && !piece.empty()) {
        size_t p = src_line.find_first_not_of(' ');
        indent = p == std::string_view::npos ? 0 : static_cast<int>(p);
      }
      int col = std::max(indent, 0);
      if (!piece.empty() &&
          (src_line.size() < col + piece.size() || src_line.substr(col, piece.size()) != piece)) {
        t.lines.clear();
        break;
      }
      t.lines.push_back({t.where.file, line, col + 1});
      if (e == std::string_view::npos) break;
      body.remove_prefix(e + 1);
      ++line;
    }
  } else if (lead != '>' && nl == std::string::npos) {
    t.lines.push_back(t.where);
  }
  return t;
}

std::optional<Text> Loader::scalar(const Node& key, const Node& v, const std::string& origin,
                                   const std::string& what) {
  if (!v.IsScalar()) {
    const Node& pos = v.IsNull() ? key : v;
    error(at(pos, origin), "'" + what + "' must be a string, found " + kind_name(v),
          v.IsNull() ? "give it a value or remove the key" : "write a single value");
    return std::nullopt;
  }
  return text_of(v, origin);
}

std::vector<Text> Loader::scalar_list(const Node& v, const std::string& origin, const std::string& what) {
  std::vector<Text> out;
  if (v.IsNull()) return out;
  if (!v.IsSequence()) {
    error(at(v, origin), "'" + what + "' must be a list, found " + kind_name(v),
          "write [a, b] or one '- item' per line");
    return out;
  }
  for (const auto& item : v) {
    std::string o = origin_of(item, origin);
    if (!item.IsScalar()) {
      error(at(item, o), "each entry of '" + what + "' must be a string, found " + kind_name(item),
            "write one value per entry");
      continue;
    }
    out.push_back(text_of(item, o));
  }
  return out;
}

std::vector<NamedValue> Loader::name_map(const Node& key, const Node& v, const std::string& origin,
                                         const std::string& what, bool (*valid_name)(const std::string&),
                                         const std::string& name_rule) {
  std::vector<NamedValue> out;
  (void)key;
  if (v.IsNull()) return out;
  if (!v.IsMap()) {
    error(at(v, origin), "'" + what + "' must be a mapping of NAME: value, found " + kind_name(v),
          "write {NAME: value} or one 'NAME: value' per line");
    return out;
  }
  std::set<std::string> seen;
  for (const auto& kv : v) {
    std::string o = origin_of(kv.second, origin);
    std::string ko = origin.empty() ? std::string() : origin;
    Text k = text_of(kv.first, ko);
    if (!kv.first.IsScalar() || !valid_name(k.value)) {
      error(at(kv.first, ko), "'" + k.value + "' is not a valid name in '" + what + "'", name_rule, k.length);
      continue;
    }
    if (!seen.insert(k.value).second) {
      error(at(kv.first, ko), "duplicate name '" + k.value + "' in '" + what + "'", "keep one of them",
            k.length);
      continue;
    }
    if (kv.second.IsNull()) {
      out.push_back({k, Text{"", at(kv.first, ko), 0, {}}, false});
      continue;
    }
    if (!kv.second.IsScalar()) {
      error(at(kv.second, o),
            "'" + what + "." + k.value + "' must be a string, found " + kind_name(kv.second),
            "quote the value");
      continue;
    }
    Text val = text_of(kv.second, o);
    if (val.value.find('\n') != std::string::npos) {
      error(val.where, "'" + what + "." + k.value + "' spans several lines", "write it on one line",
            val.length);
      continue;
    }
    out.push_back({k, val, true});
  }
  return out;
}

template <class F>
void Loader::each_field(const Node& map, const std::string& origin, const std::vector<Field>& fields,
                        const std::string& where_name, F&& f) {
  std::set<std::string> seen;
  for (const auto& kv : map) {
    Text k = text_of(kv.first, origin);
    if (!fields.empty() && !find_field(fields, k.value)) {
      std::string known;
      for (const auto& fl : fields) known += (known.empty() ? "" : ", ") + std::string(fl.key);
      error(k.where, "unknown key '" + k.value + "' in " + where_name + did_you_mean(k.value, fields),
            "known keys: " + known, k.length);
      continue;
    }
    if (!seen.insert(k.value).second) {
      error(k.where, "duplicate key '" + k.value + "' in " + where_name, "keep one of them", k.length);
      continue;
    }
    f(kv.first, kv.second, origin_of(kv.second, origin), k.value);
  }
}

void Loader::check_version(const Text& t) {
  if (t.value == "latest") {
    error(t.where, "efa.installer must be a pinned version, not 'latest'",
          "use the host AMI's installer version (seed 002: install the same EFA installer as the host), "
          "e.g. 1.50.0",
          t.length);
  } else if (!looks_like_version(t.value) || t.value.find_first_of("\\/ ") != std::string::npos) {
    error(t.where, "efa.installer '" + t.value + "' is not a version",
          "write the installer version, e.g. 1.50.0", t.length);
  }
}

void Loader::load_efa(const Node& key, const Node& v, const std::string& origin, Recipe& r) {
  r.efa_where = at(key, origin);
  r.efa_mirror = Text{kDefaultEfaMirror, {}, 0, {}};
  if (!v.IsMap()) {
    error(at(v.IsNull() ? key : v, origin), "'efa' must be a mapping with 'installer', found " + kind_name(v),
          "write efa: {installer: 1.50.0}");
    return;
  }
  bool have_installer = false;
  each_field(
      v, origin, efa_fields(), "'efa'",
      [&](const Node& k, const Node& val, const std::string& o, const std::string& name) {
        if (name == "installer") {
          if (auto t = scalar(k, val, o, "efa.installer")) {
            check_version(*t);
            r.efa_installer = *t;
            have_installer = true;
          }
        } else if (name == "flags") {
          r.efa_flags = scalar_list(val, o, "efa.flags");
        } else if (name == "mirror") {
          auto t = scalar(k, val, o, "efa.mirror");
          if (!t) return;
          while (t->value.size() > 1 && t->value.back() == '/') t->value.pop_back();
          bool ok = (t->value.rfind("http://", 0) == 0 || t->value.rfind("https://", 0) == 0) &&
                    t->value.find_first_of(" \t\n\"'\\$`") == std::string::npos;
          if (!ok)
            error(
                t->where, "efa.mirror '" + t->value + "' is not an http(s) URL",
                "give the base URL that serves aws-efa-installer-VERSION.tar.gz, e.g. http://127.0.0.1:8000",
                t->length);
          else
            r.efa_mirror = *t;
        }
      });
  if (!have_installer)
    error(r.efa_where, "'efa' has no 'installer' version",
          "add installer: with the host AMI's EFA installer version, e.g. 1.50.0", 3);
}

std::optional<ImageCommand> Loader::load_image_command(const Node& key, const Node& v,
                                                       const std::string& origin, const std::string& what) {
  ImageCommand c;
  c.where = at(v.IsNull() ? key : v, origin);
  if (v.IsScalar()) {
    c.exec_form = false;
    c.words.push_back(text_of(v, origin));
    if (c.words[0].value.empty() || c.words[0].value.find('\n') != std::string::npos) {
      error(c.where, "'" + what + "' must be one non-empty line", "write a command, or a list for exec form");
      return std::nullopt;
    }
    return c;
  }
  if (!v.IsSequence() || v.size() == 0) {
    error(c.where, "'" + what + "' must be a list of strings (exec form) or a string, found " + kind_name(v),
          "e.g. [python, /workspace/train/train.py]");
    return std::nullopt;
  }
  c.words = scalar_list(v, origin, what);
  if (c.words.size() != v.size()) return std::nullopt;
  return c;
}

std::vector<CopySpec> Loader::load_copy(const Node& key, const Node& v, const std::string& origin,
                                        const std::string& step) {
  std::vector<CopySpec> out;
  std::string what = "steps." + step + ".copy";
  if (v.IsNull()) return out;
  if (!v.IsSequence()) {
    error(at(v, origin), "'" + what + "' must be a list of {src, dst}, found " + kind_name(v),
          "write copy: [{src: train/, dst: /workspace/train/}]");
    return out;
  }
  (void)key;
  for (const auto& item : v) {
    std::string o = origin_of(item, origin);
    CopySpec c;
    c.where = at(item, o);
    if (!item.IsMap()) {
      error(c.where, "each entry of '" + what + "' must be a mapping {src, dst}, found " + kind_name(item),
            "write {src: train/, dst: /workspace/train/}");
      continue;
    }
    bool have_src = false, have_dst = false;
    each_field(item, o, copy_fields(), "a copy entry",
               [&](const Node& k, const Node& val, const std::string& vo, const std::string& name) {
                 auto t = scalar(k, val, vo, what + "." + name);
                 if (!t) return;
                 if (name == "src")
                   c.src = *t, have_src = true;
                 else
                   c.dst = *t, have_dst = true;
               });
    if (!have_src || !have_dst) {
      error(c.where, std::string("copy entry has no '") + (have_src ? "dst" : "src") + "'",
            "write {src: PATH-IN-CONTEXT, dst: /PATH/IN/IMAGE}");
      continue;
    }
    std::filesystem::path src(c.src.value);
    bool escapes = false;
    for (const auto& part : src.lexically_normal())
      if (part == "..") escapes = true;
    if (c.src.value.empty() || src.is_absolute() || escapes) {
      error(c.src.where, "copy source '" + c.src.value + "' must be a path inside the build context",
            "the build context is the recipe's directory; give a relative path without '..'", c.src.length);
      continue;
    }
    if (!context_dir_.empty() && c.src.value.find_first_of("*?[") == std::string::npos &&
        !std::filesystem::exists(std::filesystem::path(context_dir_) / src)) {
      error(c.src.where,
            "copy source '" + c.src.value + "' does not exist in the build context '" + context_dir_ + "'",
            "create it next to the recipe, or fix the path", c.src.length);
      continue;
    }
    if (c.dst.value.empty()) {
      error(c.dst.where, "copy destination is empty", "give a path in the image, e.g. /workspace/train/");
      continue;
    }
    out.push_back(c);
  }
  return out;
}

std::optional<Step> Loader::load_step(const Node& v, const std::string& origin, size_t index) {
  Step s;
  s.where = at(v, origin);
  if (!v.IsMap()) {
    error(s.where, "each step must be a mapping with 'name', found " + kind_name(v),
          "write - name: NAME, then run:, env: or copy:");
    return std::nullopt;
  }
  std::string label = std::to_string(index);
  if (const Node n = v["name"]; n && n.IsScalar()) label = n.Scalar();
  bool have_name = false;
  std::optional<Text> shell;
  each_field(v, origin, step_fields(), "step '" + label + "'",
             [&](const Node& k, const Node& val, const std::string& o, const std::string& name) {
               std::string what = "steps." + label + "." + name;
               if (name == "name") {
                 auto t = scalar(k, val, o, what);
                 if (!t) return;
                 if (t->value.empty() || !all_of_chars(t->value, step_name_char))
                   error(t->where, "step name '" + t->value + "' must be letters, digits, '.', '-' or '_'",
                         "e.g. name: deepep", t->length);
                 s.name = *t;
                 have_name = true;
               } else if (name == "description") {
                 auto t = scalar(k, val, o, what);
                 if (t && t->value.find('\n') != std::string::npos)
                   error(t->where, "'" + what + "' spans several lines", "write it on one line", t->length);
                 else if (t)
                   s.description = t;
               } else if (name == "env") {
                 s.env = name_map(k, val, o, what, valid_env_name,
                                  "environment names are letters, digits and '_', not starting with a digit");
               } else if (name == "run") {
                 auto t = scalar(k, val, o, what);
                 if (!t) return;
                 if (t->value.find_first_not_of(" \t\n") == std::string::npos)
                   error(t->where, "'" + what + "' is empty", "give commands, or remove run:", t->length);
                 else
                   s.run = t;
               } else if (name == "shell") {
                 shell = scalar(k, val, o, what);
               } else if (name == "copy") {
                 s.copy = load_copy(k, val, o, label);
               }
             });
  if (shell) {
    if (shell->value == "raw")
      s.shell = Shell::Raw;
    else if (shell->value != "join")
      error(shell->where, "shell '" + shell->value + "' is not 'join' or 'raw'",
            "join (default): each line a command, joined with &&; raw: the text as written", shell->length);
  }
  if (!have_name) {
    error(s.where, "step " + std::to_string(index) + " has no 'name'",
          "add name: NAME (used in comments and --set)");
    return std::nullopt;
  }
  if (!s.run && s.env.empty() && s.copy.empty())
    warning(s.name.where, "step '" + s.name.value + "' has no run, env or copy; it renders nothing",
            "give it run:, env: or copy:, or remove it", s.name.length);
  return s;
}

void Loader::load_steps(const Node& key, const Node& v, const std::string& origin, Recipe& r) {
  if (v.IsNull()) return;
  if (!v.IsSequence()) {
    error(at(v, origin), "'steps' must be a list, found " + kind_name(v), "write one '- name: …' per step");
    return;
  }
  (void)key;
  std::set<std::string> names;
  size_t i = 0;
  for (const auto& item : v) {
    auto s = load_step(item, origin_of(item, origin), i++);
    if (!s) continue;
    if (!names.insert(s->name.value).second) {
      error(s->name.where, "duplicate step name '" + s->name.value + "'", "step names must be unique",
            s->name.length);
      continue;
    }
    r.steps.push_back(std::move(*s));
  }
}

std::optional<Recipe> Loader::load() {
  Recipe r;
  r.file = src_.name();
  const Node& root = doc_.root;
  if (root.IsNull()) {
    error({src_.name(), 1, 1}, "the recipe is empty",
          "a recipe needs at least base: and efa: {installer: …}");
    return std::nullopt;
  }
  if (!root.IsMap()) {
    error(at(root, ""), "a recipe must be a mapping of keys, found " + std::string(kind_name(root)),
          "start with base: IMAGE");
    return std::nullopt;
  }
  bool have_base = false, have_efa = false;
  each_field(
      root, "", recipe_fields(), "the recipe",
      [&](const Node& k, const Node& v, const std::string& o, const std::string& name) {
        if (name == "base") {
          auto t = scalar(k, v, o, "base");
          if (!t) return;
          have_base = true;
          if (t->value.empty() || !all_of_chars(t->value, image_ref_char))
            error(t->where, "base '" + t->value + "' is not an image reference",
                  "e.g. nvcr.io/nvidia/pytorch:26.08-py3", t->length);
          r.base = *t;
        } else if (name == "platform") {
          auto t = scalar(k, v, o, "platform");
          if (t && (t->value.find('/') == std::string::npos || !all_of_chars(t->value, label_char)))
            error(t->where, "platform '" + t->value + "' is not OS/ARCH", "e.g. linux/amd64", t->length);
          else if (t)
            r.platform = t;
        } else if (name == "efa") {
          have_efa = true;
          load_efa(k, v, o, r);
        } else if (name == "apt") {
          r.apt_where = at(v.IsNull() ? k : v, o);
          for (auto& t : scalar_list(v, o, "apt")) {
            if (t.value.empty() || !all_of_chars(t.value, apt_char))
              error(t.where, "'" + t.value + "' is not a Debian package name",
                    "lower-case name, optionally =VERSION, e.g. ca-certificates", t.length);
            else
              r.apt.push_back(t);
          }
        } else if (name == "args") {
          r.args = name_map(k, v, o, "args", valid_env_name,
                            "build argument names are letters, digits and '_', not starting with a digit");
          for (const auto& a : r.args)
            if (a.key.value == "EFA_INSTALLER_VERSION")
              error(a.key.where, "EFA_INSTALLER_VERSION is set by efa.installer",
                    "remove it from args and set efa.installer", a.key.length);
        } else if (name == "labels") {
          r.labels = name_map(
              k, v, o, "labels",
              [](const std::string& s) { return !s.empty() && all_of_chars(s, label_char); },
              "label keys are letters, digits, '.', '-', '_' and '/'");
        } else if (name == "workdir") {
          auto t = scalar(k, v, o, "workdir");
          if (t && (t->value.empty() || t->value[0] != '/' || t->value.find('\n') != std::string::npos))
            error(t->where, "workdir '" + t->value + "' must be an absolute path", "e.g. /workspace",
                  t->length);
          else if (t)
            r.workdir = t;
        } else if (name == "entrypoint") {
          r.entrypoint = load_image_command(k, v, o, "entrypoint");
        } else if (name == "cmd") {
          r.cmd = load_image_command(k, v, o, "cmd");
        } else if (name == "steps") {
          load_steps(k, v, o, r);
        }
      });
  if (!have_base)
    error({src_.name(), 1, 1}, "the recipe has no 'base' image",
          "add base: IMAGE, e.g. nvcr.io/nvidia/pytorch:26.08-py3");
  if (!have_efa)
    error({src_.name(), 1, 1}, "the recipe has no 'efa' section",
          "add efa: {installer: VERSION} with the host AMI's EFA installer version");
  // Keep the args in ARG order only once: an ARG the recipe gives twice is
  // already refused above.
  return r;
}

}  // namespace

LoadResult load_recipe(const SourceFile& src, const std::vector<std::string>& overrides,
                       const std::string& context_dir) {
  LoadResult res;
  YamlDoc doc;
  doc.root = parse_yaml(src, recipe_syntax_rule().id);
  res.diagnostics = apply_overrides(doc, overrides);
  res.recipe = Loader(src, doc, context_dir, res.diagnostics).load();
  if (res.recipe) res.recipe->overrides = overrides;
  for (auto& d : res.diagnostics)
    if (d.file == src.name() && d.line > 0 && d.source_line.empty())
      d.source_line = std::string(src.line_text(d.line));
  return res;
}

}  // namespace trainimg::recipes
