#include "synthetic.hpp"

#include <fmt/format.h>

#include "kareus/core/rng.hpp"

namespace kareus::energylens::testing {

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

}  // namespace kareus::energylens::testing
