// SPDX-License-Identifier: Apache-2.0
// The artifact's multi-pass MBO (paper Appendix C), with one change:
// the initial sample is drawn from the seed, so runs are reproducible and resumable.
#include "kareus/core/rng.hpp"
#include "kareus/search/acquisition.hpp"
#include "observed.hpp"
#include "strategies.hpp"

namespace kareus::search {
namespace {

struct PaperPlan {
  std::size_t initial;
  std::size_t batches;
  std::size_t batch_size;
};

// Appendix C: small 36 + 3 x 16, medium 48 + 4 x 16, large 96 + 4 x 32.
PaperPlan plan_for(SizeClass size_class) {
  switch (size_class) {
    case SizeClass::kSmall:
      return {36, 3, 16};
    case SizeClass::kMedium:
      return {48, 4, 16};
    case SizeClass::kLarge:
      return {96, 4, 32};
  }
  return {36, 3, 16};
}

constexpr std::size_t kEnsembleMembers = 5;
constexpr double kEnsembleFraction = 0.8;
// Stop when the mean relative HV improvement of the last kWindow batches is below kEpsilon.
constexpr std::size_t kWindow = 2;
constexpr double kEpsilon = 1e-3;

}  // namespace

std::size_t paper_measurements(SizeClass size_class) {
  const PaperPlan plan = plan_for(size_class);
  return plan.initial + plan.batches * plan.batch_size;
}

StopReason run_paper(SearchState& state) {
  Problem& problem = state.problem();
  const PaperPlan plan = plan_for(size_class_of(problem.compute_ops()));
  const FeatureMatrix features = all_features(problem, false);
  Rng rng(state.options().seed);

  state.measure(rng.sample_without_replacement(state.size(), plan.initial), "initial");
  std::vector<double> improvements;
  for (std::size_t batch = 0; batch < plan.batches; ++batch) {
    if (state.remaining() == 0) break;
    const Observed seen = observed(state, features);
    const std::vector<std::size_t> candidates = state.unmeasured();
    const FeatureMatrix candidate_x = features.select(candidates);

    BoosterParams params;
    params.seed = rng.fork_seed();
    const ObjectiveModel model(seen.x, seen.y, params);
    const PredictedPoints predicted =
        predicted_points(model.predict(candidate_x), problem.static_power());
    const ObjectiveValues spread =
        ensemble_spread(seen.x, seen.y, candidate_x, params,
                        {kEnsembleMembers, kEnsembleFraction, rng.fork_seed()});

    // Uncertainties are summed in the normalised units of the objectives, so that neither the
    // seconds nor the joules dominate by their magnitude.
    const Normaliser2 norm_dynamic(seen.dynamic);
    const Point2 unit = norm_dynamic({1.0, 1.0});
    const Point2 zero = norm_dynamic({0.0, 0.0});
    CandidateScores scores;
    scores.hvi_total = hypervolume_improvements(seen.total, predicted.total);
    scores.hvi_dynamic = hypervolume_improvements(seen.dynamic, predicted.dynamic);
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      scores.predicted_time.push_back(predicted.total[i].x);
      scores.uncertainty.push_back(spread.time_s[i] * (unit.x - zero.x) +
                                   spread.dynamic_j[i] * (unit.y - zero.y));
    }

    std::vector<std::size_t> ids;
    std::vector<std::string> labels;
    for (const Pick& pick : select_multi_pass(scores, paper_quota(plan.batch_size))) {
      ids.push_back(candidates[pick.candidate]);
      labels.push_back(pick.pass);
    }
    state.measure(ids, labels);

    improvements.push_back(relative_improvement(seen.total, observed(state, features).total));
    if (improvements.size() >= kWindow) {
      double mean = 0.0;
      for (std::size_t i = improvements.size() - kWindow; i < improvements.size(); ++i) {
        mean += improvements[i];
      }
      if (mean / kWindow < kEpsilon) return state.stop_reason(StopReason::kConverged);
    }
  }
  return state.stop_reason(StopReason::kBatchesDone);
}

}  // namespace kareus::search
