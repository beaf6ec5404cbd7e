// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/predictors.hpp"

namespace kareus::energylens {
namespace {

class EnergyLensPredictor final : public Predictor {
 public:
  explicit EnergyLensPredictor(FitOptions options) : options_(std::move(options)) {}
  std::string name() const override { return "energylens"; }
  void fit(const std::vector<Sample>& train) override {
    model_ = fit_energy_model(train, options_);
  }
  std::vector<double> predict(const std::vector<Sample>& rows) const override {
    std::vector<double> out;
    for (const Sample& s : rows) out.push_back(model_.predict(s).value());
    return out;
  }

 private:
  FitOptions options_;
  EnergyModel model_;
};

class LatencyProxy final : public Predictor {
 public:
  std::string name() const override { return "latency_proxy"; }
  bool predicts_energy() const override { return false; }
  void fit(const std::vector<Sample>&) override {}
  std::vector<double> predict(const std::vector<Sample>& rows) const override {
    std::vector<double> out;
    for (const Sample& s : rows) out.push_back(s.time->value());
    return out;
  }
};

}  // namespace

std::unique_ptr<Predictor> make_energylens(const FitOptions& options) {
  return std::make_unique<EnergyLensPredictor>(options);
}

std::unique_ptr<Predictor> make_latency_proxy() {
  return std::make_unique<LatencyProxy>();
}

}  // namespace kareus::energylens
