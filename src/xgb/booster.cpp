// SPDX-License-Identifier: Apache-2.0
#include "kareus/xgb/booster.hpp"

#include <xgboost/c_api.h>

#include <fmt/format.h>

#include <limits>

#include "kareus/core/error.hpp"

namespace kareus::xgb {

namespace {

void check(int rc, const char* call) {
  if (rc != 0) throw Error(fmt::format("XGBoost {} failed: {}", call, XGBGetLastError()));
}

}  // namespace

class DMatrix {
 public:
  explicit DMatrix(const FeatureMatrix& x) {
    if (x.rows == 0 || x.cols == 0) {
      throw Error(
          fmt::format("XGBoost needs a non-empty feature matrix, got {} x {}", x.rows, x.cols));
    }
    check(XGDMatrixCreateFromMat(x.values.data(), x.rows, x.cols,
                                 std::numeric_limits<float>::quiet_NaN(), &handle_),
          "XGDMatrixCreateFromMat");
  }
  ~DMatrix() { XGDMatrixFree(handle_); }
  DMatrix(const DMatrix&) = delete;
  DMatrix& operator=(const DMatrix&) = delete;
  DMatrixHandle get() const { return handle_; }

 private:
  DMatrixHandle handle_ = nullptr;
};

FeatureMatrix FeatureMatrix::from_rows(const std::vector<std::vector<double>>& rows) {
  FeatureMatrix m;
  m.rows = rows.size();
  m.cols = rows.empty() ? 0 : rows.front().size();
  m.values.reserve(m.rows * m.cols);
  for (const auto& row : rows) {
    if (row.size() != m.cols) {
      throw Error(fmt::format("feature rows differ in length: {} and {}", m.cols, row.size()));
    }
    for (double v : row) m.values.push_back(static_cast<float>(v));
  }
  return m;
}

FeatureMatrix FeatureMatrix::select(const std::vector<std::size_t>& indices) const {
  FeatureMatrix m;
  m.rows = indices.size();
  m.cols = cols;
  m.values.reserve(m.rows * m.cols);
  for (std::size_t i : indices) {
    if (i >= rows) throw Error(fmt::format("feature row {} selected from {} rows", i, rows));
    const auto begin = values.begin() + static_cast<std::ptrdiff_t>(i * cols);
    m.values.insert(m.values.end(), begin, begin + static_cast<std::ptrdiff_t>(cols));
  }
  return m;
}

Booster::Booster(const FeatureMatrix& x, const std::vector<double>& y,
                 const BoosterParams& params) {
  if (y.size() != x.rows) {
    throw Error(fmt::format("XGBoost training: {} labels for {} rows", y.size(), x.rows));
  }
  DMatrix train(x);
  const std::vector<float> labels(y.begin(), y.end());
  check(XGDMatrixSetFloatInfo(train.get(), "label", labels.data(), labels.size()),
        "XGDMatrixSetFloatInfo");
  DMatrixHandle dmats[] = {train.get()};
  check(XGBoosterCreate(dmats, 1, &handle_), "XGBoosterCreate");
  try {
    configure_and_train(train, params);
  } catch (...) {
    XGBoosterFree(handle_);
    throw;
  }
}

Booster::~Booster() {
  if (handle_ != nullptr) XGBoosterFree(handle_);
}

Booster& Booster::operator=(Booster&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) XGBoosterFree(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

void Booster::configure_and_train(const DMatrix& train, const BoosterParams& params) {
  const std::pair<const char*, std::string> settings[] = {
      {"objective", "reg:squarederror"},
      {"max_depth", std::to_string(params.max_depth)},
      {"eta", fmt::format("{}", params.eta)},
      {"subsample", fmt::format("{}", params.subsample)},
      {"colsample_bytree", fmt::format("{}", params.colsample_bytree)},
      {"min_child_weight", fmt::format("{}", params.min_child_weight)},
      {"nthread", "1"},
      // XGBoost parses the seed as a signed integer.
      {"seed", std::to_string(params.seed & 0x7fffffffu)},
      {"verbosity", "0"},
  };
  for (const auto& [name, value] : settings) {
    check(XGBoosterSetParam(handle_, name, value.c_str()), "XGBoosterSetParam");
  }
  for (const auto& [name, value] : params.extra) {
    check(XGBoosterSetParam(handle_, name.c_str(), value.c_str()), "XGBoosterSetParam");
  }
  for (int round = 0; round < params.rounds; ++round) {
    check(XGBoosterUpdateOneIter(handle_, round, train.get()), "XGBoosterUpdateOneIter");
  }
}

std::vector<double> Booster::predict(const FeatureMatrix& x) const {
  DMatrix data(x);
  bst_ulong length = 0;
  const float* result = nullptr;
  check(XGBoosterPredict(handle_, data.get(), 0, 0, 0, &length, &result), "XGBoosterPredict");
  if (length != x.rows) {
    throw Error(fmt::format("XGBoost predicted {} values for {} rows", length, x.rows));
  }
  return std::vector<double>(result, result + length);
}

}  // namespace kareus::xgb
