// The Python module's native half (`easyplan._easyplan`): loads api::Models and runs commands through
// the command table (api/command_table.h), with the GIL released while C++ works; the table itself, as
// JSON, is what easyplan/__init__.py builds its functions, signatures and docstrings from. No C++
// exception crosses into the interpreter: every entry point returns {"error": ...} instead.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/command_table.h"
#include "api/model.h"
#include "api/plan_pipeline.h"
#include "core/document.h"
#include "core/file_system.h"
#include "core/json_parse.h"
#include "core/tree_json.h"

namespace py = pybind11;

namespace easyplan::python {
namespace {

py::dict DiagDict(const Diag& diag) {
  py::dict out;
  out["severity"] = diag.severity == Severity::kError     ? "error"
                    : diag.severity == Severity::kWarning ? "warning"
                                                          : "note";
  out["message"] = diag.message;
  out["file"] = diag.loc.file.empty() ? py::object(py::none()) : py::object(py::str(diag.loc.file));
  out["line"] = diag.loc.line > 0 ? py::object(py::int_(diag.loc.line)) : py::object(py::none());
  out["column"] = diag.loc.column > 0 ? py::object(py::int_(diag.loc.column)) : py::object(py::none());
  out["pointer"] = diag.loc.pointer.empty() ? py::object(py::none()) : py::object(py::str(diag.loc.pointer));
  out["notes"] = diag.notes;
  // As the CLI prints it (cli/context.cc): a diagnostic with no location names the tool.
  const std::string text = diag.ToString();
  out["text"] = diag.loc.ToString().empty() ? "easyplan: " + text : text;
  return out;
}

/// What a call hands back to Python: a result or a failed Status, and the resolver's diagnostics.
struct Outcome {
  Status status;
  std::vector<Diag> diags;
  bool internal = false;  ///< an exception escaped the library: a bug
  std::string internal_message;
};

py::dict OutcomeDict(const Outcome& outcome) {
  py::dict out;
  py::list diags;
  for (const Diag& diag : outcome.diags) diags.append(DiagDict(diag));
  out["diags"] = diags;
  out["error"] = py::none();
  if (outcome.internal) {
    py::dict error;
    error["kind"] = "internal";
    error["message"] = outcome.internal_message;
    out["error"] = error;
  } else if (!outcome.status.ok()) {
    py::dict error = DiagDict(outcome.status.diag());
    error["kind"] = outcome.status.kind() == ErrorKind::kInternal ? "internal" : "bad_input";
    out["error"] = error;
  }
  return out;
}

/// Runs `body` (which returns a Status) with the GIL released, turning any exception into an
/// internal error.
template <typename Body>
Outcome Guarded(Body&& body) {
  Outcome outcome;
  py::gil_scoped_release release;
  try {
    outcome.status = body(outcome);
  } catch (const std::exception& e) {
    outcome.internal = true;
    outcome.internal_message = std::string("internal error: ") + e.what();
  } catch (...) {
    outcome.internal = true;
    outcome.internal_message = "internal error: unknown exception";
  }
  return outcome;
}

StatusOr<Json> ParseOptions(const std::string& text) {
  EP_ASSIGN_OR_RETURN(Document doc, ParseJsonDocument(text, "<options>", Limits{}));
  return doc.root();
}

/// The warnings a model finds after it is loaded (Environment::warn: a key given twice in a --rules file
/// or a --hardware profile, once per file), kept until the call that read the file hands them back with
/// its result; easyplan/__init__.py turns them into Python warnings as it does the resolver's. The CLI
/// prints the same warnings to stderr.
struct PendingWarnings {
  std::mutex mutex;
  std::vector<Diag> diags;

  void Add(const Diag& diag) {
    std::lock_guard<std::mutex> lock(mutex);
    diags.push_back(diag);
  }
  std::vector<Diag> Take() {
    std::lock_guard<std::mutex> lock(mutex);
    return std::exchange(diags, {});
  }
};

/// A loaded model, shared by every call on it (api::Model is safe to use from many threads).
struct PyModel {
  std::shared_ptr<const api::Model> model;
  std::shared_ptr<PendingWarnings> warnings;
};

/// `outcome` with the warnings the model found during the call.
void AddPendingWarnings(const PyModel& self, Outcome& outcome) {
  for (Diag& diag : self.warnings->Take()) outcome.diags.push_back(std::move(diag));
}

py::dict Load(const std::string& kind, const std::string& payload, const std::string& name,
              const std::string& options_json) {
  std::shared_ptr<const api::Model> loaded;
  auto warnings = std::make_shared<PendingWarnings>();
  Outcome outcome = Guarded([&](Outcome& o) -> Status {
    EP_ASSIGN_OR_RETURN(Json options, ParseOptions(options_json));
    api::CommandOptions parsed = api::DefaultOptions("model");
    EP_RETURN_IF_ERROR(api::ApplyOptions("model", options, &parsed));
    api::ConfigSource source;
    if (kind == "path") {
      source = api::ConfigSource::Path(payload);
    } else if (kind == "text") {
      source = api::ConfigSource::Text(payload, name);
    } else if (kind != "none") {
      return Status::Internal("unknown config kind '" + kind + "'");
    }
    api::Environment env = api::Environment::Real();
    if (!parsed.plan.config.schemas_dir.empty()) env.schemas_dir = parsed.plan.config.schemas_dir;
    parsed.limits.ApplyTo(&env.limits, parsed.given);
    env.warn = [warnings](const Diag& diag) { warnings->Add(diag); };
    EP_ASSIGN_OR_RETURN(loaded, api::Model::Load(std::move(env), std::move(source), parsed.plan.config, &o.diags));
    return Status();
  });
  py::dict out = OutcomeDict(outcome);
  out["model"] = loaded ? py::cast(PyModel{loaded, warnings}) : py::object(py::none());
  if (loaded) out["config"] = loaded->config().dump(-1, ' ', false, Json::error_handler_t::replace);
  return out;
}

/// A plan kept native until its JSON is asked for: a search over many meshes reads only the small
/// parts that come with it (rules, bytes per device, findings).
struct PyPlan {
  std::shared_ptr<const api::PlanResult> result;
  api::PlanViewOptions view;

  std::string Json() const {
    py::gil_scoped_release release;
    return api::PlanResultToJsonText(*result, view);
  }
};

StatusOr<api::CommandOptions> ParseCommandOptions(const PyModel& self, const api::CommandSpec& spec,
                                                  const std::string& options_json,
                                                  const std::optional<std::string>& tree_json) {
  EP_ASSIGN_OR_RETURN(Json options, ParseOptions(options_json));
  api::CommandOptions parsed = api::DefaultOptions(spec.name);
  parsed.plan.config = self.model->options();
  EP_RETURN_IF_ERROR(api::ApplyOptions(std::string(spec.name), options, &parsed));
  if (tree_json) {
    EP_ASSIGN_OR_RETURN(ParamTree tree, ParseTreeJson(*tree_json, "<tree>", Limits{}, parsed.plan.tree.max_tensors));
    parsed.plan.tree.given = std::make_shared<const ParamTree>(std::move(tree));
  }
  return parsed;
}

/// A command as the CLI runs it (api/command_table.h): the options checked by their declarations and
/// the command's own checks, the model (honouring or refusing the call's config options), the run, and
/// the files the call names written through the model's file system (atomically, an existing file's
/// mode kept, a path that cannot be written bad input).
StatusOr<api::CommandResult> RunCommand(const PyModel& self, const api::CommandSpec& spec,
                                        const api::CommandOptions& parsed) {
  EP_ASSIGN_OR_RETURN(const api::CheckedCommand checked, api::CheckCommandOptions(spec, parsed));
  // A call's own config options (set=, devices=, ...) are honoured or refused, never dropped.
  EP_ASSIGN_OR_RETURN(std::shared_ptr<const api::Model> model,
                      api::ModelWithOptions(self.model, parsed.plan.config, spec.name));
  EP_ASSIGN_OR_RETURN(api::CommandResult result, api::RunCommand(spec, {model, nullptr}, checked));
  if (spec.files) {
    RealFileSystem fs;  // a Model's environment is always the real one (api::Environment::Real)
    // All of them or none (docs/RELIABILITY.md, "Output safety").
    const std::vector<std::pair<std::string, std::string>> files = spec.files(result, parsed);
    std::vector<std::pair<std::string, std::string_view>> views(files.begin(), files.end());
    EP_RETURN_IF_ERROR(fs.WriteFilesAtomically(views));
  }
  return result;
}

py::dict RunPlan(const PyModel& self, const std::string& options_json, const std::optional<std::string>& tree_json) {
  std::shared_ptr<const api::PlanResult> result;
  api::PlanViewOptions view;
  Json extra;
  Outcome outcome = Guarded([&](Outcome&) -> Status {
    EP_ASSIGN_OR_RETURN(const api::CommandSpec* spec, api::FindCommand("plan"));
    EP_ASSIGN_OR_RETURN(api::CommandOptions parsed, ParseCommandOptions(self, *spec, options_json, tree_json));
    view = {parsed.rank, parsed.summary};
    EP_ASSIGN_OR_RETURN(api::CommandResult run, RunCommand(self, *spec, parsed));
    result = std::get<std::shared_ptr<const api::PlanResult>>(run.value);
    EP_ASSIGN_OR_RETURN(extra, api::PlanSummaryJson(*result));
    return Status();
  });
  AddPendingWarnings(self, outcome);
  py::dict out = OutcomeDict(outcome);
  if (result) {
    out["plan"] = PyPlan{result, view};
    out["extra"] = extra.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  return out;
}

py::dict Run(const PyModel& self, const std::string& command, const std::string& options_json,
             const std::optional<std::string>& tree_json) {
  std::string text;
  bool failed = false;
  Outcome outcome = Guarded([&](Outcome&) -> Status {
    EP_ASSIGN_OR_RETURN(const api::CommandSpec* spec, api::FindCommand(command));
    EP_ASSIGN_OR_RETURN(api::CommandOptions parsed, ParseCommandOptions(self, *spec, options_json, tree_json));
    EP_ASSIGN_OR_RETURN(api::CommandResult result, RunCommand(self, *spec, parsed));
    text = spec->document(result, parsed);
    failed = result.outcome == api::Outcome::kFindings;
    return Status();
  });
  AddPendingWarnings(self, outcome);
  py::dict out = OutcomeDict(outcome);
  if (outcome.status.ok() && !outcome.internal) {
    out["text"] = text;
    out["failed"] = failed;
  }
  return out;
}

}  // namespace
}  // namespace easyplan::python

PYBIND11_MODULE(_easyplan, m) {
  using namespace easyplan::python;
  m.doc() = "easyplan's native half; use the `easyplan` package.";
  py::class_<PyModel>(m, "_Model")
      .def("run", &Run, py::arg("command"), py::arg("options_json"), py::arg("tree_json") = py::none())
      .def("plan", &RunPlan, py::arg("options_json"), py::arg("tree_json") = py::none());
  py::class_<PyPlan>(m, "_Plan").def("json", &PyPlan::Json);
  m.def("load", &Load, py::arg("kind"), py::arg("payload"), py::arg("name"), py::arg("options_json"));
  m.def("command_table", [] { return easyplan::api::CommandTableJson().dump(); });
  m.attr("__version__") = EASYPLAN_VERSION;
}
