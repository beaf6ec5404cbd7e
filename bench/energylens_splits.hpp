// The evaluation's random splits (evaluate.cpp's random_splits: same seeds, same rows), for the
// benchmark's diagnostics that need each split's fitted model.
#pragma once

#include <algorithm>
#include <vector>

#include "kareus/core/rng.hpp"
#include "kareus/energylens/evaluate.hpp"
#include "kareus/energylens/fit.hpp"

namespace splits {

namespace el = kareus::energylens;

// Calls visit(model, test rows, sorted) for each split, the model fitted to its training rows
// with o.fit seeded as the evaluation seeds it.
template <class Visit>
void for_each_random_split(const el::Dataset& d, const el::EvaluateOptions& o, Visit visit) {
  kareus::Rng rng(o.seed);
  for (int s = 0; s < o.seeds; ++s) {
    const std::uint64_t split_seed = rng.fork_seed();
    kareus::Rng split(split_seed);
    const std::vector<std::size_t> order =
        split.sample_without_replacement(d.samples.size(), d.samples.size());
    std::vector<el::Sample> train;
    for (std::size_t i = 0; i < o.train_size; ++i) train.push_back(d.samples[order[i]]);
    std::vector<std::size_t> test(order.begin() + static_cast<long>(o.train_size), order.end());
    std::sort(test.begin(), test.end());
    el::FitOptions f = o.fit;
    f.seed = split_seed;
    visit(el::fit_energy_model(train, f), test);
  }
}

}  // namespace splits
