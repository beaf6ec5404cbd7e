#include "kareus/energylens/symbolic.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kareus/core/error.hpp"
#include "synthetic.hpp"

namespace kareus::energylens {
namespace {

double truth(const Sample& s) {
  return 2.5 * s.output_tokens / s.batch + 40.0 * s.tp;
}

TEST(EnergyLensSymbolic, RecoversAKnownFormulaFromNoisyData) {
  const Dataset d = testing::synthetic_grid(truth, 0.01, 21);
  DiscoverOptions o;
  o.seed = 4;
  const DiscoverResult r = discover(d, o);
  ASSERT_FALSE(r.front.empty());
  // The front is ordered: more nodes only when the loss falls.
  for (std::size_t i = 1; i < r.front.size(); ++i) {
    EXPECT_GT(r.front[i].complexity, r.front[i - 1].complexity);
    EXPECT_LT(r.front[i].loss, r.front[i - 1].loss);
  }
  // Some member of at most 11 nodes reproduces the truth on a fresh noise-free grid within 3 %.
  const Dataset check = testing::synthetic_grid(truth, 0.0, 22);
  double best = 1e9;
  std::string best_text;
  for (const FrontMember& m : r.front) {
    if (m.complexity > 11) continue;
    double worst = 0.0;
    for (const Sample& s : check.samples)
      worst = std::max(worst, std::fabs(m.scale * m.expression.evaluate(s) / truth(s) - 1.0));
    if (worst < best) {
      best = worst;
      best_text = m.expression.to_string();
    }
  }
  EXPECT_LT(best, 0.03) << best_text;
}

// Rows of catalogue models whose energy is proportional to the model's parameter count: with one
// scale group only a descriptor can explain the levels, and discovery must find it.
TEST(EnergyLensSymbolic, FindsADescriptorDependenceAcrossModels) {
  Params shape{};
  shape[b_p] = shape[b_d] = 1.0;
  shape[e_p] = shape[e_d] = 1e-6;
  shape[a_d] = 1.0;  // E = out / batch x scale
  const Dataset d = testing::descriptor_grid(shape, {1.0, 0.0, 0.0, 0.0}, 0.0, 0.0, 5);
  DiscoverOptions o;
  o.descriptors = true;
  o.generations = 40;
  o.population = 300;
  o.seed = 2;
  const DiscoverResult r = discover(d, o);
  EXPECT_NE(std::find(r.variables.begin(), r.variables.end(), Var::kParamsB), r.variables.end());
  ASSERT_FALSE(r.front.empty());
  const FrontMember& best = r.front.back();
  EXPECT_LT(best.loss, 1e-3) << best.expression.to_string();
  EXPECT_NE(best.expression.to_string().find("params_b"), std::string::npos)
      << best.expression.to_string();
}

TEST(EnergyLensSymbolic, ExpressionsEvaluateAndPrint) {
  using Op = ExprNode::Op;
  // (output_tokens / batch) + 16 * tp in prefix order.
  Expression e{{{Op::kAdd, 0, Var::kTp},
                {Op::kDiv, 0, Var::kTp},
                {Op::kVariable, 0, Var::kOutputTokens},
                {Op::kVariable, 0, Var::kBatch},
                {Op::kMul, 0, Var::kTp},
                {Op::kConstant, 16.0, Var::kTp},
                {Op::kVariable, 0, Var::kTp}}};
  Sample s;
  s.output_tokens = 100;
  s.batch = 4;
  s.tp = 2;
  EXPECT_DOUBLE_EQ(e.evaluate(s), 57.0);
  EXPECT_EQ(e.to_string(), "output_tokens / batch + 16 * tp");
  Expression bad{{{Op::kLog, 0, Var::kTp}, {Op::kConstant, -1.0, Var::kTp}}};
  EXPECT_TRUE(std::isnan(bad.evaluate(s)));
}

TEST(EnergyLensSymbolic, RejectsDataWithNothingToDiscover) {
  Dataset d = testing::synthetic_grid(truth, 0.0, 1);
  d.samples.resize(1);
  EXPECT_THROW(discover(d, DiscoverOptions{}), Error);
}

}  // namespace
}  // namespace kareus::energylens
