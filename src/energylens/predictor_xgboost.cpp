#include <fmt/format.h>
#include <xgboost/c_api.h>

#include <cmath>
#include <limits>
#include <map>

#include "kareus/core/error.hpp"
#include "kareus/energylens/predictors.hpp"

namespace kareus::energylens {
namespace {

void check(int rc, const char* what) {
  if (rc != 0) throw Error(fmt::format("XGBoost {} failed: {}", what, XGBGetLastError()));
}

class DMatrix {
 public:
  DMatrix(const std::vector<float>& data, std::size_t rows, std::size_t cols) {
    check(XGDMatrixCreateFromMat(data.data(), rows, cols, std::numeric_limits<float>::quiet_NaN(),
                                 &handle_),
          "XGDMatrixCreateFromMat");
  }
  ~DMatrix() { XGDMatrixFree(handle_); }
  DMatrix(const DMatrix&) = delete;
  DMatrix& operator=(const DMatrix&) = delete;
  DMatrixHandle get() const { return handle_; }

 private:
  DMatrixHandle handle_ = nullptr;
};

class XgbPredictor final : public Predictor {
 public:
  XgbPredictor(TreeKind kind, std::vector<std::string> scale_by, std::uint64_t seed)
      : kind_(kind), scale_by_(std::move(scale_by)), seed_(seed) {}
  ~XgbPredictor() override {
    if (booster_) XGBoosterFree(booster_);
  }
  std::string name() const override {
    return kind_ == TreeKind::random_forest ? "random_forest" : "gradient_boosting";
  }

  void fit(const std::vector<Sample>& train) override {
    groups_.clear();
    for (const Sample& s : train)
      groups_.emplace(scale_group_key(s, scale_by_), static_cast<float>(groups_.size()));
    const DMatrix dtrain(features(train), train.size(), kColumns);
    std::vector<float> label;
    for (const Sample& s : train) label.push_back(static_cast<float>(std::log(s.energy->value())));
    check(XGDMatrixSetFloatInfo(dtrain.get(), "label", label.data(), label.size()), "set label");
    if (booster_) XGBoosterFree(booster_);
    DMatrixHandle handles[] = {dtrain.get()};
    check(XGBoosterCreate(handles, 1, &booster_), "XGBoosterCreate");
    set("nthread", "1");
    set("verbosity", "0");
    set("seed", std::to_string(seed_ % 2147483647));
    set("objective", "reg:squarederror");
    int rounds = 1;
    // Breiman-style forest as XGBoost documents it (one round of parallel trees, eta 1,
    // row and column subsampling); boosting with common defaults for small data.
    if (kind_ == TreeKind::random_forest) {
      set("num_parallel_tree", "100");
      set("eta", "1");
      set("subsample", "0.632");
      set("colsample_bynode", "0.8");
      set("max_depth", "8");
      set("min_child_weight", "1");
    } else {
      rounds = 200;
      set("eta", "0.1");
      set("max_depth", "4");
      set("subsample", "0.8");
      set("min_child_weight", "1");
    }
    for (int i = 0; i < rounds; ++i)
      check(XGBoosterUpdateOneIter(booster_, i, dtrain.get()), "XGBoosterUpdateOneIter");
  }

  std::vector<double> predict(const std::vector<Sample>& rows) const override {
    const DMatrix d(features(rows), rows.size(), kColumns);
    const char* config =
        R"({"type": 0, "training": false, "iteration_begin": 0, "iteration_end": 0, "strict_shape": false})";
    const bst_ulong* shape = nullptr;
    bst_ulong dim = 0;
    const float* result = nullptr;
    check(XGBoosterPredictFromDMatrix(booster_, d.get(), config, &shape, &dim, &result),
          "XGBoosterPredictFromDMatrix");
    std::vector<double> out;
    for (std::size_t i = 0; i < rows.size(); ++i) out.push_back(std::exp(double(result[i])));
    return out;
  }

 private:
  static constexpr std::size_t kColumns = 6;

  void set(const char* key, const std::string& value) {
    check(XGBoosterSetParam(booster_, key, value.c_str()), key);
  }

  std::vector<float> features(const std::vector<Sample>& rows) const {
    std::vector<float> x;
    for (const Sample& s : rows) {
      const auto g = groups_.find(scale_group_key(s, scale_by_));
      const float nan = std::numeric_limits<float>::quiet_NaN();
      for (double v : {s.tp, s.pp, s.batch, s.output_tokens, s.input_tokens.value_or(nan)})
        x.push_back(static_cast<float>(v));
      x.push_back(g == groups_.end() ? nan : g->second);
    }
    return x;
  }

  TreeKind kind_;
  std::vector<std::string> scale_by_;
  std::uint64_t seed_;
  std::map<std::string, float> groups_;
  BoosterHandle booster_ = nullptr;
};

}  // namespace

std::unique_ptr<Predictor> make_xgboost(TreeKind kind, std::vector<std::string> scale_by,
                                        std::uint64_t seed) {
  return std::make_unique<XgbPredictor>(kind, std::move(scale_by), seed);
}

}  // namespace kareus::energylens
