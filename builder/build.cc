// SPDX-License-Identifier: GPL-3.0-or-later
// trainimg build: lint, render, stream the context, POST /build, follow the
// progress, map a failing step back to its source.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "builder/build_plan.h"
#include "builder/builder.h"
#include "builder/context.h"
#include "builder/failure_hints.h"
#include "builder/progress.h"
#include "common/error.h"
#include "common/report.h"
#include "common/version.h"
#include "inspect/engine/engine.h"

namespace trainimg::builder {
namespace fs = std::filesystem;
namespace {

using nlohmann::ordered_json;

ordered_json diagnostic_json(const Diagnostic& d) {
  ordered_json j;
  j["severity"] = std::string(to_string(d.severity));
  if (!d.rule_id.empty()) j["rule"] = d.rule_id;
  j["message"] = d.message;
  if (!d.file.empty()) j["file"] = d.file;
  if (d.line > 0) j["line"] = d.line;
  if (d.column > 0) j["column"] = d.column;
  if (!d.hint.empty()) j["hint"] = d.hint;
  return j;
}

void emit(std::ostream& out, ordered_json j) {
  out << j.dump() << "\n" << std::flush;
}

std::string query(const BuildPlan& plan, const BuildOptions& opt, const std::string& api) {
  using inspect::engine::url_escape;
  std::string q = "/build?dockerfile=" + url_escape(plan.dockerfile_name);
  // Host networking, always: never Docker's default bridge (the CI daemon
  // has none), and RUN steps reach only what the host reaches (loopback).
  q += "&networkmode=host&rm=1&forcerm=1";
  if (!opt.tag.empty()) q += "&t=" + url_escape(opt.tag);
  if (opt.no_cache) q += "&nocache=1";
  if (!plan.build_args.empty()) q += "&buildargs=" + url_escape(plan.build_args.dump());
  // API 1.38+ takes the builder version; "1" is the classic builder whose
  // "Step N/M" stream this parser follows.
  if (compare_versions(api, "1.38") >= 0) q += "&version=1";
  return q;
}

// Follows the progress events: prints them, tracks the step, its output
// hint, the error and the image id.
class Follower {
 public:
  Follower(const BuildPlan& plan, const BuildOptions& opt, std::ostream& out, const ContextStream& ctx)
      : plan_(plan), opt_(opt), out_(out), ctx_(ctx) {}

  void on(const BuildEvent& e) {
    announce_context();
    switch (e.kind) {
      case BuildEvent::Kind::Step:
        step_ = e.step;
        steps_ = e.steps;
        hint_.reset();
        hint_line_.clear();
        show_step(e);
        break;
      case BuildEvent::Kind::Output:
        if (!hint_) {
          if (auto h = hint_for_output(e.text)) {
            hint_ = h;
            hint_line_ = e.text;
          }
        }
        if (e.text.starts_with("Successfully built ")) fallback_id_ = e.text.substr(19);
        show_output(e.text);
        break;
      case BuildEvent::Kind::Error:
        error_ = e.text.empty() ? "the daemon reported an error without a message" : e.text;
        break;
      case BuildEvent::Kind::ImageId: image_id_ = e.text; break;
    }
  }

  void finish(BuildResult& r) {
    announce_context();
    r.steps = steps_;
    if (error_) {
      r.failure = failure();
      return;
    }
    r.image_id = image_id_.empty() ? fallback_id_ : image_id_;
    if (r.image_id.empty())
      throw Error("dockerd", "the build ended without an error and without an image ID");
  }

 private:
  void announce_context() {
    if (announced_) return;
    announced_ = true;
    if (opt_.progress == ProgressMode::Json)
      emit(out_, {{"event", "context"},
                  {"schema", "trainimg.build-progress/v1"},
                  {"files", ctx_.files()},
                  {"bytes", ctx_.bytes()}});
    else if (opt_.progress == ProgressMode::Text)
      out_ << "context: " << ctx_.files() << " entries, " << ctx_.bytes() << " bytes sent\n" << std::flush;
  }

  void show_step(const BuildEvent& e) {
    const StepSource* src = plan_.step(e.step);
    if (opt_.progress == ProgressMode::Json) {
      ordered_json j{{"event", "step"}, {"step", e.step}, {"steps", e.steps}, {"instruction", e.text}};
      if (src) {
        j["file"] = src->file;
        j["line"] = src->line;
        if (src->dockerfile_line != src->line || src->file != plan_.dockerfile_display)
          j["dockerfile_line"] = src->dockerfile_line;
      }
      emit(out_, j);
    } else if (opt_.progress == ProgressMode::Text) {
      const char* bold = opt_.color ? "\033[1m" : "";
      const char* reset = opt_.color ? "\033[0m" : "";
      out_ << bold << "step " << e.step << "/" << e.steps << ": " << e.text << reset << "\n" << std::flush;
    }
  }

  void show_output(const std::string& text) {
    if (opt_.progress == ProgressMode::Json)
      emit(out_, {{"event", "output"}, {"step", step_}, {"text", text}});
    else if (opt_.progress == ProgressMode::Text)
      out_ << "  " << text << "\n" << std::flush;
  }

  Diagnostic failure() const {
    Diagnostic d;
    d.severity = Severity::Error;
    d.seed = "002";
    const StepSource* src = plan_.step(step_);
    std::string what = "step " + std::to_string(step_) + "/" + std::to_string(steps_) + " failed";
    if (src) {
      d.file = src->file;
      d.line = src->line;
      d.column = src->column;
      d.length = src->length;
      d.source_line = src->source_line;
      if (src->file != plan_.dockerfile_display)
        what += " (line " + std::to_string(src->dockerfile_line) + " of the rendered Dockerfile)";
    } else {
      d.file = plan_.dockerfile_display;
    }
    d.message = what + ": " + *error_;
    if (hint_) {
      d.rule_id = std::string(hint_->rule_id);
      d.hint = std::string(hint_->hint);
      d.message += "; the step printed: " + hint_line_;
    }
    return d;
  }

  const BuildPlan& plan_;
  const BuildOptions& opt_;
  std::ostream& out_;
  const ContextStream& ctx_;
  bool announced_ = false;
  int step_ = 0, steps_ = 0;
  std::optional<FailureHint> hint_;
  std::string hint_line_;
  std::optional<std::string> error_;
  std::string image_id_, fallback_id_;
};

}  // namespace

BuildResult build(const BuildOptions& opt, std::ostream& progress, const FindingsHandler& on_findings) {
  BuildResult r;
  BuildPlan plan = make_plan(opt, r.findings);
  for (const auto& d : r.findings) r.lint_failed = r.lint_failed || d.severity == Severity::Error;
  if (on_findings) on_findings(r.findings);
  if (r.lint_failed) return r;

  auto engine = inspect::engine::Engine::connect();
  ContextStream ctx(plan.context_dir, plan.ignore, plan.injected);
  Follower follow(plan, opt, progress, ctx);
  ProgressParser parser([&](const BuildEvent& e) { follow.on(e); });
  engine.post(
      query(plan, opt, engine.api_version()), [&](char* buf, size_t n) { return ctx.read(buf, n); },
      {"Content-Type: application/x-tar"}, [&](std::string_view s) { parser.feed(s); });
  parser.finish();
  follow.finish(r);
  return r;
}

namespace {

// --sqsh: dockerd://ID imported to the .sqsh, then its inspection printed.
int import_and_inspect(const BuildOptions& opt, const std::string& image_id, std::ostream& out,
                       std::ostream& err) {
  const bool json = opt.progress == ProgressMode::Json;
  ImportOptions io = *opt.then_import;
  io.source = "dockerd://" + image_id;
  io.inspect = true;
  ImportProgressFn progress;
  if (json) {
    progress = [&out](const ImportProgress& p) {
      emit(out, {{"event", "import"}, {"phase", p.phase}, {"files", p.files}, {"bytes", p.bytes}});
    };
  } else if (opt.progress == ProgressMode::Text) {
    progress = import_progress_printer("auto", err, opt.err_is_tty);
  }
  ImportResult ir = import_image(io, progress);
  if (json)
    emit(out, {{"event", "imported"}, {"sidecar", ir.sidecar}});
  else
    out << import_summary(ir) << std::flush;
  if (!ir.report) {
    std::string why = ir.sidecar["inspect"].value("error", "unknown error");
    if (json)
      emit(out, {{"event", "done"}, {"ok", false}, {"reason", "inspect"}, {"error", why}});
    else
      err << "trainimg: " << ir.output << ": published, but it could not be inspected: " << why << "\n";
    return kExitUsage;
  }
  int rc = exit_code(*ir.report, FailOn::Error);
  if (json) {
    emit(out, {{"event", "inspect"}, {"report", render_json(*ir.report)}});
    emit(out, {{"event", "done"},
               {"ok", rc == kExitOk},
               {"image_id", image_id},
               {"sqsh", ir.output},
               {"verdict", ir.sidecar["inspect"].value("verdict", "")}});
  } else {
    TextOptions t;
    t.color = opt.color;
    out << "\n" << render_text(*ir.report, t);
  }
  return rc;
}

}  // namespace

int run_build(const BuildOptions& opt, std::ostream& out, std::ostream& err) {
  bool json = opt.progress == ProgressMode::Json;
  BuildResult r = build(opt, out, [&](const std::vector<Diagnostic>& findings) {
    for (const auto& d : findings) {
      if (json) {
        ordered_json j{{"event", "finding"}};
        j.update(diagnostic_json(d));
        emit(out, j);
      } else {
        err << render_diagnostic(d, opt.color) << std::flush;
      }
    }
  });
  if (r.lint_failed) {
    if (json)
      emit(out, {{"event", "done"}, {"ok", false}, {"reason", "lint"}});
    else
      err << "trainimg: lint errors: nothing was built (fix them, or pass --no-lint)\n";
    return kExitFindings;
  }
  if (r.failure) {
    if (json) {
      ordered_json j{{"event", "error"}};
      j.update(diagnostic_json(*r.failure));
      emit(out, j);
      emit(out, {{"event", "done"}, {"ok", false}, {"reason", "build"}});
    } else {
      err << render_diagnostic(*r.failure, opt.color);
    }
    return kExitFindings;
  }
  if (!opt.then_import) {
    if (json) {
      ordered_json j{{"event", "done"}, {"ok", true}, {"image_id", r.image_id}};
      if (!opt.tag.empty()) j["tag"] = opt.tag;
      emit(out, j);
    } else {
      out << "built " << r.image_id << (opt.tag.empty() ? "" : " as " + opt.tag) << "\n";
    }
    return kExitOk;
  }
  if (json)
    emit(out, {{"event", "built"}, {"image_id", r.image_id}, {"tag", opt.tag}});
  else
    out << "built " << r.image_id << (opt.tag.empty() ? "" : " as " + opt.tag) << "\n" << std::flush;
  return import_and_inspect(opt, r.image_id, out, err);
}

}  // namespace trainimg::builder
