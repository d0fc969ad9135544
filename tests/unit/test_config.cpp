#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "error_of.h"
#include "util/config.h"
#include "util/error.h"

namespace ct {
namespace {

std::string WriteTemp(const std::string& text) {
  static int counter = 0;
  // The pid keeps parallel test processes (ctest -j) from sharing a file.
  std::string path =
      testing::TempDir() + "ct_config_" + std::to_string(getpid()) + "_" + std::to_string(counter++) + ".yaml";
  std::ofstream(path) << text;
  return path;
}

// The message of the ConfigError that a piece of code throws ("" if it throws none).
const auto ErrorOf = test::ErrorOf<ConfigError>;

TEST(Config, DefaultsMatchTheSeedsSchedulerSettings) {
  Config c = LoadConfig("", {});
  EXPECT_EQ(c.train.plateau.mode, PlateauMode::kMin);
  EXPECT_DOUBLE_EQ(c.train.plateau.factor, 0.2);
  EXPECT_EQ(c.train.plateau.patience, 4);
  EXPECT_DOUBLE_EQ(c.train.plateau.threshold, 1e-4);
  EXPECT_EQ(c.train.plateau.threshold_mode, ThresholdMode::kRel);
  EXPECT_EQ(c.model.hidden, (std::vector<int64_t>{512, 256}));
  EXPECT_EQ(c.model.latent, 16);
  EXPECT_EQ(c.runtime.threads, 0);
}

TEST(Config, ReadsNestedYaml) {
  Config c = LoadConfig(WriteTemp("data:\n  train: a.h5\n  val: b.h5\nmodel:\n  hidden: [64, 32]\n"
                                  "train:\n  lr: 3.0e-4\n  epochs: 7\n  plateau:\n    patience: 2\n"
                                  "runtime:\n  threads: 3\n"),
                        {});
  EXPECT_EQ(c.data.train, std::vector<std::string>{"a.h5"});
  EXPECT_EQ(c.model.hidden, (std::vector<int64_t>{64, 32}));
  EXPECT_DOUBLE_EQ(c.train.lr, 3e-4);
  EXPECT_EQ(c.train.epochs, 7);
  EXPECT_EQ(c.train.plateau.patience, 2);
  EXPECT_EQ(c.runtime.threads, 3);
}

TEST(Config, OverridesApplyAfterTheFileInOrder) {
  std::string path = WriteTemp("train:\n  epochs: 7\n");
  Config c = LoadConfig(path, {"train.epochs=3", "model.hidden=[8,4,2]", "train.epochs=5", "runtime.threads=auto"});
  EXPECT_EQ(c.train.epochs, 5);
  EXPECT_EQ(c.model.hidden, (std::vector<int64_t>{8, 4, 2}));
  EXPECT_EQ(c.runtime.threads, 0);
}

TEST(Config, UnknownKeyNamesKeyLineAndSuggestion) {
  std::string path = WriteTemp("train:\n  epochs: 3\n  lrr: 0.1\n");
  std::string msg = ErrorOf([&] { LoadConfig(path, {}); });
  EXPECT_NE(msg.find("'train.lrr'"), std::string::npos) << msg;
  EXPECT_NE(msg.find(path + ":3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean 'train.lr'"), std::string::npos) << msg;
  msg = ErrorOf([&] { LoadConfig("", {"trian.epochs=3"}); });
  EXPECT_NE(msg.find("'trian.epochs'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--set"), std::string::npos) << msg;
}

TEST(Config, WrongTypeAndRangeNameTheKey) {
  EXPECT_NE(ErrorOf([] { LoadConfig("", {"train.lr=fast"}); }).find("'train.lr'"), std::string::npos);
  EXPECT_NE(ErrorOf([] { LoadConfig("", {"train.lr=0"}); }).find("must be a number > 0"), std::string::npos);
  EXPECT_NE(ErrorOf([] { LoadConfig("", {"train.epochs=2.5"}); }).find("expected an integer"), std::string::npos);
  EXPECT_NE(ErrorOf([] { LoadConfig("", {"train.batch_size=0"}); }).find("'train.batch_size'"), std::string::npos);
  EXPECT_NE(ErrorOf([] { LoadConfig("", {"train.lr_scaling=cubic"}); }).find("linear | sqrt | none"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { LoadConfig("", {"model.hidden=[]"}); }).find("non-empty list"), std::string::npos);
  EXPECT_NE(ErrorOf([] { LoadConfig("", {"runtime.threads=0"}); }).find("auto or >= 1"), std::string::npos);
  EXPECT_NE(ErrorOf([] { LoadConfig("", {"train.plateau.factor=1.5"}); }).find("train.plateau.factor"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { LoadConfig("", {"train.epochs"}); }).find("section.key=value"), std::string::npos);
}

TEST(Config, BadYamlAndMissingFileAreClear) {
  std::string msg = ErrorOf([] { LoadConfig(WriteTemp("train: [unclosed\n"), {}); });
  EXPECT_NE(msg.find("invalid YAML"), std::string::npos) << msg;
  msg = ErrorOf([] { LoadConfig("/nonexistent/x.yaml", {}); });
  EXPECT_NE(msg.find("cannot read config file"), std::string::npos) << msg;
  msg = ErrorOf([] { LoadConfig(WriteTemp("train: 3\n"), {}); });
  EXPECT_NE(msg.find("'train'"), std::string::npos) << msg;
}

// yaml-cpp calls a tab in the indentation an "illegal map value"; the message says what it is.
TEST(Config, ATabInTheIndentationIsNamed) {
  std::string msg = ErrorOf([] { LoadConfig(WriteTemp("model:\n  latent: 8\ntrain:\n\tepochs: 3\n"), {}); });
  EXPECT_NE(msg.find(".yaml:4: invalid YAML: "), std::string::npos) << msg;
  EXPECT_NE(msg.find("YAML does not allow tabs in indentation: indent with spaces"), std::string::npos) << msg;
  msg = ErrorOf([] { LoadConfig(WriteTemp("train:\n  epochs: [3\n"), {}); });  // no tab: no such hint
  EXPECT_EQ(msg.find("tabs"), std::string::npos) << msg;
  EXPECT_EQ(LoadConfig(WriteTemp("train:\n  epochs: 3\t# a tab after the value is fine\n"), {}).train.epochs, 3);
}

TEST(Config, InputFilesMustExist) {
  Config c = LoadConfig("", {"data.train=/nonexistent/train.h5", "data.val=/nonexistent/val.h5"});
  std::string msg = ErrorOf([&] { CheckInputFiles(c); });
  EXPECT_NE(msg.find("data.train"), std::string::npos) << msg;
  EXPECT_NE(msg.find("make-data"), std::string::npos) << msg;
  Config unset = LoadConfig("", {});
  EXPECT_NE(ErrorOf([&] { CheckInputFiles(unset); }).find("is not set"), std::string::npos);
}

TEST(Config, ResolvedYamlLoadsBackToTheSameConfig) {
  Config original = LoadConfig("", {"data.train=x.h5", "model.hidden=[7,5]", "train.lr=0.0025",
                                    "train.plateau.threshold_mode=abs", "runtime.threads=4"});
  Config again = LoadConfig(WriteTemp(ConfigToYaml(original)), {});
  EXPECT_EQ(ConfigToYaml(again), ConfigToYaml(original));
  EXPECT_EQ(again.model.hidden, original.model.hidden);
  EXPECT_DOUBLE_EQ(again.train.lr, 0.0025);
  EXPECT_EQ(again.train.plateau.threshold_mode, ThresholdMode::kAbs);
  EXPECT_EQ(again.runtime.threads, 4);
}

// config.yaml and --help-config show numbers as they are written (0.9, not yaml-cpp's
// 0.90000000000000002), and those read back as the very same doubles.
TEST(Config, NumbersAreWrittenAsPeopleWriteThemAndReadBackExactly) {
  const Config c = LoadConfig("", {"train.lr=0.0003", "train.weight_decay=1e-4", "data.memory_budget=1.1",
                                   "train.plateau.threshold=0.1", "runtime.bucket_mb=0.3"});
  const std::string yaml = ConfigToYaml(c);
  for (const char* line : {"  lr: 0.0003\n", "  weight_decay: 0.0001\n", "  memory_budget: 1.1\n", "  momentum: 0.9\n",
                           "    factor: 0.2\n", "    threshold: 0.1\n", "    eps: 1e-08\n", "  bucket_mb: 0.3\n"}) {
    EXPECT_NE(yaml.find(line), std::string::npos) << line << " not in\n" << yaml;
  }
  EXPECT_NE(ConfigKeyHelp().find("train.momentum  (number >= 0 and <= 0.999; default 0.9)"), std::string::npos);
  const Config again = LoadConfig(WriteTemp(yaml), {});
  EXPECT_EQ(again.train.lr, c.train.lr);  // exactly
  EXPECT_EQ(again.train.weight_decay, c.train.weight_decay);
  EXPECT_EQ(again.data.memory_budget_gib, c.data.memory_budget_gib);
  EXPECT_EQ(again.runtime.bucket_mb, c.runtime.bucket_mb);
  EXPECT_EQ(again.train.momentum, c.train.momentum);
}

TEST(Config, RuntimeKeysForBindingAndGradientSync) {
  Config defaults = LoadConfig("", {});
  EXPECT_EQ(defaults.runtime.bind, Binding::kAuto);
  EXPECT_DOUBLE_EQ(defaults.runtime.bucket_mb, 25.0);  // DDP's default
  EXPECT_TRUE(defaults.runtime.overlap);
  EXPECT_EQ(defaults.runtime.interop_threads, 0);
  Config c = LoadConfig("", {"runtime.bind=none", "runtime.bucket_mb=0.5", "runtime.overlap=false",
                             "runtime.interop_threads=2", "runtime.comm_timeout_s=30"});
  EXPECT_EQ(c.runtime.bind, Binding::kNone);
  EXPECT_DOUBLE_EQ(c.runtime.bucket_mb, 0.5);
  EXPECT_FALSE(c.runtime.overlap);
  EXPECT_EQ(c.runtime.interop_threads, 2);
  EXPECT_DOUBLE_EQ(c.runtime.comm_timeout_s, 30.0);
  EXPECT_EQ(ConfigToYaml(LoadConfig(WriteTemp(ConfigToYaml(c)), {})), ConfigToYaml(c));
  EXPECT_NE(ErrorOf([] { LoadConfig("", {"runtime.bind=numa"}); }).find("must be one of auto | none"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { LoadConfig("", {"runtime.bucket_mb=0"}); }).find("'runtime.bucket_mb'"), std::string::npos);
  EXPECT_NE(ErrorOf([] { LoadConfig("", {"runtime.overlap=maybe"}); }).find("expected true or false"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { LoadConfig("", {"runtime.interop_threads=0"}); }).find("auto or >= 1"), std::string::npos);
}

TEST(Config, MpiHintsAreAMappingOfStrings) {
  EXPECT_TRUE(LoadConfig("", {}).data.mpi_hints.empty());
  const Config c = LoadConfig("", {"data.mpi_hints={romio_cb_read: enable, cb_buffer_size: 16777216}"});
  const std::map<std::string, std::string> expected = {{"cb_buffer_size", "16777216"}, {"romio_cb_read", "enable"}};
  EXPECT_EQ(c.data.mpi_hints, expected);
  EXPECT_EQ(LoadConfig(WriteTemp(ConfigToYaml(c)), {}).data.mpi_hints, expected);  // and back from config.yaml
  EXPECT_NE(ErrorOf([] { LoadConfig("", {"data.mpi_hints=enable"}); }).find("expected a mapping"), std::string::npos);
  EXPECT_NE(ErrorOf([] { LoadConfig("", {"data.mpi_hints={a: [1, 2]}"}); }).find("'a' must be a single value"),
            std::string::npos);
}

// A path, a list or a glob; the list survives config.yaml; an empty list or entry is an error.
TEST(Config, DataFilesAreAPathAListOrGlobs) {
  const Config c = LoadConfig(WriteTemp("data:\n  train: [bank/a.h5, 'bank/b-*.h5']\n  val: v.h5\n"), {});
  EXPECT_EQ(c.data.train, (std::vector<std::string>{"bank/a.h5", "bank/b-*.h5"}));
  EXPECT_EQ(c.data.val, std::vector<std::string>{"v.h5"});
  EXPECT_EQ(LoadConfig(WriteTemp(ConfigToYaml(c)), {}).data.train, c.data.train);
  EXPECT_EQ(LoadConfig("", {"data.train=[x.h5, y.h5]"}).data.train, (std::vector<std::string>{"x.h5", "y.h5"}));
  EXPECT_TRUE(LoadConfig("", {"data.val="}).data.val.empty());
  EXPECT_NE(ErrorOf([] { LoadConfig("", {"data.train=[]"}); }).find("non-empty list"), std::string::npos);
  EXPECT_NE(ErrorOf([] { LoadConfig("", {"data.train=[a.h5, '']"}); }).find("is empty"), std::string::npos);
  EXPECT_NE(ErrorOf([] { LoadConfig("", {"data.train={a: b}"}); }).find("'data.train'"), std::string::npos);
}

// Every file a glob or list names must exist; a pattern must match at least one.
TEST(Config, EveryDataFileMustExist) {
  const std::string dir = testing::TempDir() + "ct_files_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/b-1.h5") << "x";
  std::ofstream(dir + "/b-2.h5") << "x";
  Config ok = LoadConfig("", {"data.train=" + dir + "/b-*.h5", "data.val_fraction=0.1"});
  EXPECT_EQ(ErrorOf([&] { CheckInputFiles(ok); }), "");
  Config missing = LoadConfig("", {"data.train=[" + dir + "/b-1.h5, " + dir + "/c.h5]", "data.val_fraction=0.1"});
  EXPECT_NE(ErrorOf([&] { CheckInputFiles(missing); }).find("file '" + dir + "/c.h5' does not exist"),
            std::string::npos);
  Config none = LoadConfig("", {"data.train=" + dir + "/x-*.h5", "data.val_fraction=0.1"});
  EXPECT_NE(ErrorOf([&] { CheckInputFiles(none); }).find("matches no file"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(Config, ValidationFileOrFractionNotBoth) {
  EXPECT_DOUBLE_EQ(LoadConfig("", {"data.val_fraction=0.1"}).data.val_fraction, 0.1);
  EXPECT_NE(ErrorOf([] {
              LoadConfig("", {"data.val=v.h5", "data.val_fraction=0.1"});
            }).find("not both"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { LoadConfig("", {"data.val_fraction=1"}); }).find("'data.val_fraction'"), std::string::npos);
}

TEST(Config, SkippingNonFiniteStepsNeedsPerStepChecks) {
  EXPECT_EQ(LoadConfig("", {}).train.on_nonfinite, OnNonFinite::kStop);
  EXPECT_EQ(LoadConfig("", {}).train.nan_check_every, 0);
  const std::string msg = ErrorOf([] { LoadConfig("", {"train.on_nonfinite=skip"}); });
  EXPECT_NE(msg.find("set train.nan_check_every"), std::string::npos) << msg;
  Config c = LoadConfig("", {"train.on_nonfinite=skip", "train.nan_check_every=10"});
  EXPECT_EQ(c.train.nan_check_every, 10);
}

TEST(Config, HelpListsEveryKey) {
  std::string help = ConfigKeyHelp();
  for (const char* key : {"data.train", "model.beta", "train.plateau.cooldown", "runtime.backend"}) {
    EXPECT_NE(help.find(key), std::string::npos) << key;
  }
}

// Issue 33: every real key must be a finite float32 (1e300 overflowed only inside LibTorch).
TEST(Config, RealKeysMustBeFiniteFloat32) {
  for (const std::string value : {"1e300", ".inf", "1e39", "1e-50"}) {
    const std::string message = ErrorOf([&] { LoadConfig("", {"train.lr=" + value}); });
    EXPECT_NE(
        message.find("config key 'train.lr' (--set train.lr=" + value + "): must be a finite number that float32"),
        std::string::npos)
        << message;
  }
  EXPECT_NE(ErrorOf([] { LoadConfig("", {"train.plateau.eps=.inf"}); }).find("float32"), std::string::npos);
  EXPECT_EQ(ErrorOf([] { LoadConfig("", {"train.lr=1e-30"}); }), "");
  EXPECT_NE(ErrorOf([] { LoadConfig("", {"data.memory_budget=1e300"}); }).find("float32"), std::string::npos);
}

// YAML's null means "not set": the key keeps or returns to its default, in a file and in --set.
TEST(Config, NullMeansNotSet) {
  Config c = LoadConfig(WriteTemp("data:\n  train: a.h5\n  val: null\n  val_fraction: 0.1\n"
                                  "train:\n  lr: ~\n  epochs:\nruntime:\n"),
                        {});
  EXPECT_TRUE(c.data.val.empty());
  EXPECT_DOUBLE_EQ(c.data.val_fraction, 0.1);
  EXPECT_DOUBLE_EQ(c.train.lr, Config{}.train.lr);
  EXPECT_EQ(c.train.epochs, Config{}.train.epochs);
  // A --set null undoes what the file set, so data.val no longer clashes with data.val_fraction.
  const std::string both = WriteTemp("data:\n  train: a.h5\n  val: b.h5\n");
  EXPECT_NE(ErrorOf([&] { LoadConfig(both, {"data.val_fraction=0.1"}); }).find("both set"), std::string::npos);
  for (const std::string null : {"null", "~", "Null"}) {
    Config unset = LoadConfig(both, {"data.val=" + null, "data.val_fraction=0.1"});
    EXPECT_TRUE(unset.data.val.empty()) << null;
  }
  EXPECT_EQ(LoadConfig("", {"model.hidden=null"}).model.hidden, Config{}.model.hidden);
  // An empty --set value stays an empty string (an unset file list), as before.
  EXPECT_TRUE(LoadConfig(both, {"data.val="}).data.val.empty());
}

}  // namespace
}  // namespace ct
