#include "kareus/energylens/closed_form.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "kareus/core/rng.hpp"
#include "kareus/energylens/fit.hpp"
#include "synthetic.hpp"

namespace kareus::energylens {
namespace {

Params random_params(Rng& rng) {
  Params p;
  const auto& info = parameter_info();
  for (std::size_t k = 0; k < kParams; ++k) {
    const double lo = std::max(info[k].lower, -1.5), hi = std::min(info[k].upper, 3.0);
    p[k] = rng.uniform(lo + 0.05, hi);
  }
  return p;
}

TEST(EnergyLensClosedForm, GradientMatchesCentralDifferences) {
  Rng rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    const Params p = random_params(rng);
    const Features x{std::pow(2.0, double(rng.integer(0, 3))), double(rng.integer(1, 4)),
                     rng.uniform(1.0, 512.0), rng.uniform(10.0, 2000.0), rng.uniform(10.0, 2000.0)};
    Gradient g;
    const double value = closed_form(p, x, g);
    EXPECT_DOUBLE_EQ(value, closed_form(p, x));
    for (std::size_t k = 0; k < kParams; ++k) {
      const double h = 1e-6 * std::max(1.0, std::fabs(p[k]));
      Params up = p, down = p;
      up[k] += h;
      down[k] -= h;
      const double fd = (closed_form(up, x) - closed_form(down, x)) / (2 * h);
      EXPECT_NEAR(g[k], fd, 1e-5 * std::max(1.0, std::fabs(fd)))
          << parameter_info()[k].name << " trial " << trial;
    }
  }
}

TEST(EnergyLensClosedForm, LossGradientMatchesCentralDifferencesWithScaleGroups) {
  const Dataset d = testing::synthetic_grid(
      [](const Sample& s) { return 2.0 * s.output_tokens / std::sqrt(s.batch) + 30.0 * s.tp; },
      0.05, 3);
  std::vector<Sample> rows = d.samples;
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i].model = i % 3 == 0 ? "a" : "b";
  Rng rng(11);
  for (Loss loss : {Loss::relative, Loss::log}) {
    for (int trial = 0; trial < 5; ++trial) {
      const Params p = random_params(rng);
      Gradient g;
      fit_loss(p, rows, loss, {"model"}, &g);
      for (std::size_t k = 0; k < kParams; ++k) {
        const double h = 1e-6 * std::max(1.0, std::fabs(p[k]));
        Params up = p, down = p;
        up[k] += h;
        down[k] -= h;
        const double fd = (fit_loss(up, rows, loss, {"model"}, nullptr) -
                           fit_loss(down, rows, loss, {"model"}, nullptr)) /
                          (2 * h);
        EXPECT_NEAR(g[k], fd, 1e-4 * std::max(1e-3, std::fabs(fd)))
            << parameter_info()[k].name << " " << loss_name(loss);
      }
    }
  }
}

TEST(EnergyLensClosedForm, MissingInputTokensCountAsOnePerRequest) {
  Sample s;
  s.tp = 2;
  s.pp = 1;
  s.batch = 8;
  s.output_tokens = 100;
  EXPECT_EQ(features_of(s).input_tokens, 1.0);
  s.input_tokens = 300;
  EXPECT_EQ(features_of(s).input_tokens, 300.0);
}

}  // namespace
}  // namespace kareus::energylens
