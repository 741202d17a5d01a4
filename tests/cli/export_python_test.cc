// `easyplan export --to jax` writes a Python module: it must compile (python3 -m py_compile) and hold
// nothing but data (one `from jax.sharding import PartitionSpec`, then assignments of literals and
// PartitionSpec(...) calls). Skipped when python3 is not installed, unless EASYPLAN_REQUIRE_TOOLS is set.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace easyplan {
namespace {

namespace fs = std::filesystem;

// Checks with Python's own parser that the module only imports jax.sharding and assigns data.
constexpr const char* kDataOnlyCheck = R"PY(
import ast, sys
tree = ast.parse(open(sys.argv[1], encoding="utf-8").read())
def data(node):
    if isinstance(node, ast.Constant): return True
    if isinstance(node, (ast.Tuple, ast.List)): return all(data(e) for e in node.elts)
    if isinstance(node, ast.Dict): return all(data(k) and data(v) for k, v in zip(node.keys, node.values))
    if isinstance(node, ast.Call):
        return (isinstance(node.func, ast.Name) and node.func.id == "PartitionSpec" and not node.keywords
                and all(data(a) for a in node.args))
    return False
for stmt in tree.body:
    if isinstance(stmt, ast.ImportFrom):
        assert stmt.module == "jax.sharding" and [a.name for a in stmt.names] == ["PartitionSpec"], ast.dump(stmt)
    elif isinstance(stmt, ast.Assign):
        assert all(isinstance(t, ast.Name) for t in stmt.targets) and data(stmt.value), ast.dump(stmt)
    else:
        raise AssertionError("not data: " + ast.dump(stmt))
)PY";

bool HavePython() { return std::system("command -v python3 >/dev/null 2>&1") == 0; }

class ExportPythonTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ExportPythonTest, JaxModuleCompilesAndIsDataOnly) {
  if (!HavePython()) {
    // scripts/test installs python3 and sets EASYPLAN_REQUIRE_TOOLS: there a missing python3 fails.
    if (std::getenv("EASYPLAN_REQUIRE_TOOLS") != nullptr)
      FAIL() << "python3 not found but EASYPLAN_REQUIRE_TOOLS is set";
    GTEST_SKIP() << "python3 not found";
  }
  const fs::path dir = fs::temp_directory_path() / ("easyplan-export-py-" + std::to_string(::getpid()) + GetParam());
  fs::create_directories(dir);
  const fs::path module = dir / "sharding.py";
  const fs::path check = dir / "check.py";
  std::ofstream(check) << kDataOnlyCheck;
  const std::string export_cmd =
      std::string("cd '") + EASYPLAN_SOURCE_DIR + "' && '" + EASYPLAN_BINARY + "' export tests/fixtures/tree/" +
      GetParam() + ".json --to jax --mesh dp=1,fsdp=2,ep=1,tp=2,sp=1 -o '" + module.string() + "' 2>/dev/null";
  ASSERT_EQ(std::system(export_cmd.c_str()), 0) << export_cmd;
  const std::string compile = "python3 -m py_compile '" + module.string() + "'";
  EXPECT_EQ(std::system(compile.c_str()), 0) << compile;
  const std::string data_only = "python3 '" + check.string() + "' '" + module.string() + "'";
  EXPECT_EQ(std::system(data_only.c_str()), 0) << data_only;
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Families, ExportPythonTest,
                         ::testing::Values("llama", "mixtral", "deepseek_v3", "qwen3_moe", "gemma3", "gpt2", "phi3"));

}  // namespace
}  // namespace easyplan
