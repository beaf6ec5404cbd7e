// SPDX-License-Identifier: Apache-2.0
// Runs one search on a synthetic problem through the measurement store, slowly, so that a test can
// kill it mid-run. Usage:
//   store_resume_helper DB STRATEGY SEED DELAY_MS LOG OUT
// LOG receives one line per reading (repeats included); OUT the result as JSON.
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "kareus/core/error.hpp"
#include "kareus/search/search.hpp"
#include "kareus/store/stored_problem.hpp"
#include "synthetic_problem.hpp"

int main(int argc, char** argv) {
  using namespace kareus;
  if (argc != 7) {
    std::cerr << "usage: store_resume_helper DB STRATEGY SEED DELAY_MS LOG OUT\n";
    return 2;
  }
  try {
    testing::SyntheticProblem problem({2, 2, 1.5e-3, 32e6, 0.005, 4});
    problem.set_delay(std::chrono::milliseconds(std::stoi(argv[4])));
    problem.set_log(argv[5]);
    store::Store db(argv[1]);
    store::StoredProblem stored(problem, db, {"A100", "synthetic", "medium", "fwd_test"});
    search::SearchOptions options;
    options.strategy = search::parse_strategy(argv[2]);
    options.seed = std::stoull(argv[3]);
    const search::SearchResult result = search::run_search(stored, options);
    nlohmann::json out{{"measurements", result.summary.measurements()},
                       {"taken", result.summary.measurements_taken},
                       {"reused", result.summary.measurements_reused},
                       {"frontier_total", result.frontier_total},
                       {"frontier_dynamic", result.frontier_dynamic},
                       {"stop_reason", search::to_string(result.summary.stop_reason)}};
    std::ofstream(argv[6]) << out.dump() << '\n';
  } catch (const Error& e) {
    std::cerr << "store_resume_helper: " << e.what() << '\n';
    return 2;
  }
  return 0;
}
