#ifndef EASYPLAN_API_CHECKED_H_
#define EASYPLAN_API_CHECKED_H_

// Options whose checks have passed (issue 46: options are checked once). A pipeline that takes
// Checked<CostOptions> runs no option check of its own, and cannot be handed options that skipped
// theirs: the only way to make one is Checked<Options>::Of, which runs the checks declared for that
// options type, `Status OptionChecks(const Options&)` (found beside the type: api/cost.h, api/report.h,
// ...). The command table checks a command's options before it loads the model and hands the result to
// the command's run (api/command_table.h, CheckedCommand); a C++ caller that fills an options struct
// itself calls the pipeline's overload that takes the plain struct, which checks it once the same way.

#include <utility>

#include "core/status.h"

namespace easyplan::api {

template <typename Options>
class Checked {
 public:
  /// `options` once OptionChecks(options) passed, else its error.
  static StatusOr<Checked> Of(Options options) {
    EP_RETURN_IF_ERROR(OptionChecks(options));
    return Checked(std::move(options));
  }

  const Options& operator*() const { return options_; }
  const Options* operator->() const { return &options_; }

  /// A part whose checks the whole's include (a command's plan group: every OptionChecks of an options
  /// type with a PlanOptions member runs the plan's), checked with it.
  template <typename Part>
  Checked<Part> PartOf(Part Options::*member) const {
    return Checked<Part>(options_.*member);
  }
  /// A copy with `edit` applied, still checked: only for an edit of fields the checks do not read, or to
  /// values they accept by construction (suggest's candidate mesh; export's layout for its format). Each
  /// caller says which in a comment; anything else builds new options and checks them.
  template <typename Edit>
  Checked Edited(Edit edit) const {
    Options copy = options_;
    edit(copy);
    return Checked(std::move(copy));
  }

  /// The same for a view the whole's checks check (ValidateOptions::Activations).
  template <typename Part>
  Checked<Part> PartOf(Part (Options::*view)() const) const {
    return Checked<Part>((options_.*view)());
  }

 private:
  template <typename>
  friend class Checked;
  explicit Checked(Options options) : options_(std::move(options)) {}
  Options options_;
};

}  // namespace easyplan::api

#endif  // EASYPLAN_API_CHECKED_H_
