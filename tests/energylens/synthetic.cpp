// SPDX-License-Identifier: Apache-2.0
#include "synthetic.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kareus/core/rng.hpp"

namespace kareus::energylens::testing {

Params shape() {
  Params p{};
  p[a_p] = 0.0;
  p[b_p] = 0.5;
  p[e_p] = 1.0;
  p[a_d] = 2.0;
  p[b_d] = 0.7;
  p[e_d] = 4.0;
  p[g1_d] = 0.3;
  p[g2_d] = 0.2;
  p[d1] = 1.0;
  p[d2] = 3.0;
  return p;
}

Params random_params(Rng& rng) {
  Params p;
  const auto& info = parameter_info();
  for (std::size_t k = 0; k < kParams; ++k) {
    const double lo = std::max(info[k].lower, -1.5), hi = std::min(info[k].upper, 3.0);
    p[k] = rng.uniform(lo + 0.05, hi);
  }
  // J per output token per context token: far below a per-token energy, else the context term
  // (up to 2000 x 3000 units here) swamps the rest and the differences lose their precision.
  p[c_kv] *= 1e-4;
  return p;
}

Features random_features(Rng& rng) {
  return {std::pow(2.0, double(rng.integer(0, 3))),
          double(rng.integer(1, 4)),
          rng.uniform(1.0, 512.0),
          rng.uniform(10.0, 2000.0),
          rng.uniform(10.0, 2000.0),
          double(rng.integer(1, 4))};
}

Dataset synthetic_grid(const std::function<double(const Sample&)>& truth, double noise,
                       std::uint64_t seed) {
  Rng rng(seed);
  Dataset d;
  d.source = "synthetic";
  d.has_time = true;
  std::size_t line = 2;
  for (double out : {128.0, 512.0}) {
    for (double tp : {1.0, 2.0, 4.0, 8.0}) {
      for (double pp : {1.0, 2.0}) {
        for (double batch : {1.0, 4.0, 16.0, 64.0, 256.0}) {
          Sample s;
          s.scenario = fmt::format("out{}", out);
          s.tp = tp;
          s.pp = pp;
          s.batch = batch;
          s.output_tokens = out;
          s.energy = Joules(truth(s) * (1.0 + noise * rng.normal(0.0, 1.0)));
          s.time = Seconds(out * 0.01 * (1.0 + batch / 64.0) / tp);
          s.line = line++;
          d.samples.push_back(s);
        }
      }
    }
  }
  return d;
}

Dataset descriptor_grid(const Params& shape, const ScaleVector& kappa, double tau, double sigma,
                        std::uint64_t seed) {
  Rng rng(seed);
  Dataset d;
  d.source = "synthetic";
  std::size_t line = 2;
  DescriptorCache cache;
  for (const char* model :
       {"llama3.2-1b", "llama3.2-3b", "meta-llama-3.1-8b-instruct", "gemma-2-9b-it",
        "codellama-13b-hf", "gemma-2-27b-it", "codellama-34b-hf", "mixtral-8x7b-instruct-v0.1",
        "meta-llama-3.1-70b-instruct", "mistral-large-instruct-2407"}) {
    for (const char* gpu : {"a100-sxm4-40gb", "h100-sxm", "h100-nvl", "a40"}) {
      const double effect = tau * rng.normal(0.0, 1.0);
      for (double tp : {1.0, 2.0, 4.0}) {
        for (double pp : {1.0, 2.0}) {
          for (double batch : {8.0, 32.0, 128.0}) {
            Sample s;
            s.model = model;
            s.gpu = gpu;
            s.scenario = fmt::format("{}|{}", model, gpu);
            s.tp = tp;
            s.pp = pp;
            s.batch = batch;
            s.output_tokens = 256.0;
            const ScaleVector& x = cache.of(s, d.source);
            double log_scale = effect + sigma * rng.normal(0.0, 1.0);
            for (std::size_t j = 0; j < kScaleTerms; ++j) log_scale += kappa[j] * x[j];
            s.energy =
                Joules(closed_form(shape, features_of(s, cache.idle_power_share(s, d.source))) *
                       std::exp(log_scale));
            s.line = line++;
            d.samples.push_back(s);
          }
        }
      }
    }
  }
  return d;
}

std::vector<Sample> random_rows(const Params& truth, std::size_t n, int max_tp_log2,
                                double max_batch, double noise, Rng& rng) {
  std::vector<Sample> rows;
  for (std::size_t i = 0; i < n; ++i) {
    Sample s;
    s.scenario = "s";
    s.tp = std::pow(2.0, static_cast<double>(rng.integer(0, max_tp_log2)));
    s.pp = static_cast<double>(rng.integer(1, 2));
    s.batch = std::exp(rng.uniform(0.0, std::log(max_batch)));
    s.output_tokens = rng.uniform(128.0, 1024.0);
    s.line = i + 2;
    s.energy = Joules(closed_form(truth, features_of(s)) * std::exp(noise * rng.normal(0, 1)));
    rows.push_back(s);
  }
  return rows;
}

}  // namespace kareus::energylens::testing
