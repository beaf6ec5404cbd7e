// SPDX-License-Identifier: Apache-2.0
// The evaluation's random splits (energylens::random_splits: the rows and seeds evaluate() scores),
// for the benchmark's diagnostics that need each split's fitted model.
#pragma once

#include <vector>

#include "kareus/energylens/evaluate.hpp"
#include "kareus/energylens/fit.hpp"

namespace splits {

namespace el = kareus::energylens;

// Calls visit(model, test rows, sorted) for each split, the model fitted to its training rows
// with o.fit seeded as the evaluation seeds it.
template <class Visit>
void for_each_random_split(const el::Dataset& d, const el::EvaluateOptions& o, Visit visit) {
  for (const el::RandomSplit& split : el::random_splits(d.samples.size(), o.train_size, o)) {
    std::vector<el::Sample> train;
    for (std::size_t i : split.train) train.push_back(d.samples[i]);
    el::FitOptions f = o.fit;
    f.seed = split.seed;
    visit(el::fit_energy_model(train, f), split.test);
  }
}

}  // namespace splits
