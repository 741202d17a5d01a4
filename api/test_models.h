#ifndef EASYPLAN_API_TEST_MODELS_H_
#define EASYPLAN_API_TEST_MODELS_H_

// api tests: the bundled examples (examples/NAME) as Models.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "api/model.h"
#include "tests/test_util.h"

namespace easyplan::api {

inline std::string Example(const std::string& name) { return testing::SourceDir() + "/examples/" + name; }

/// examples/NAME loaded with `options`; a failed load fails the test and returns null.
inline std::shared_ptr<const Model> LoadExample(const std::string& name, ConfigOptions options = {}) {
  auto model = Model::Load(Environment::Real(), ConfigSource::Path(Example(name)), std::move(options));
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return model.ok() ? *model : nullptr;
}

}  // namespace easyplan::api

#endif  // EASYPLAN_API_TEST_MODELS_H_
