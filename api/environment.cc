#include "api/environment.h"

namespace easyplan::api {

Environment Environment::Real() {
  Environment env;
  env.fs = std::make_shared<const RealFileSystem>();
  return env;
}

schemas::DataSource Environment::Data() const {
  return schemas_dir.empty() ? schemas::DataSource::Embedded() : schemas::DataSource::Directory(schemas_dir, *fs);
}

}  // namespace easyplan::api
