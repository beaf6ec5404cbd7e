// SPDX-License-Identifier: Apache-2.0
// kareus energylens end to end: the descriptor scale's intervals and close calls reach the
// output, and rows the catalogues cannot describe are refused before anything is printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/run_cli.hpp"
#include "kareus/core/json.hpp"
#include "kareus/core/wrap.hpp"
#include "kareus/energylens/closed_form.hpp"

namespace kareus {
namespace {

const std::string kBinary = KAREUS_BINARY;
namespace fs = std::filesystem;

fs::path write_csv(const std::string& name, const std::string& model, const std::string& gpu) {
  const fs::path path = fs::temp_directory_path() / name;
  std::ofstream out(path);
  out << "scenario,tp,pp,batch,output_tokens,energy_j,model,gpu\n";
  // Energy per request falling with batch, twice as high for the 8B model as for the 3B one.
  int line = 0;
  for (const std::string& m : {std::string("Llama-3.2-3B"), model}) {
    const double level = m == "Llama-3.2-3B" ? 1.0 : 2.0;
    for (double batch : {1.0, 4.0, 16.0, 64.0, 256.0})
      out << m << "|" << gpu << ",1,1," << batch << ",200,"
          << level * (100.0 / (1.0 + batch) + 5.0 + 0.1 * (++line % 3)) << "," << m << "," << gpu
          << "\n";
  }
  return path;
}

// `energylens fit` of `csv` (with `flags`) written to `model`; a fatal failure if it does not exit
// 0.
void fit_to(const fs::path& csv, const fs::path& model, const std::string& flags = "") {
  const auto fit = testing::run_cli(
      kBinary, "energylens fit" + flags + " --data " + csv.string() + " --out " + model.string());
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
}

TEST(EnergyLensCli, PredictAndSelectReportIntervalsAndCloseCalls) {
  const fs::path csv = write_csv("kareus_el_cli_ok.csv", "Llama-3.1-8B", "NVIDIA H100 NVL");
  const fs::path model = fs::temp_directory_path() / "kareus_el_cli_model.json";
  ASSERT_NO_FATAL_FAILURE(fit_to(csv, model));
  const auto predict = testing::run_cli(
      kBinary, "energylens predict --json --fit " + model.string() + " --data " + csv.string());
  ASSERT_EQ(predict.exit_code, 0) << predict.err;
  const Json p = Json::parse(predict.out);
  for (const auto& row : p["rows"]) {
    const double e = row["predicted_energy_j"];
    EXPECT_LE(double(row["interval_j"]["low"]), e);
    EXPECT_GE(double(row["interval_j"]["high"]), e);
  }
  const auto select = testing::run_cli(kBinary, "energylens select --json --fit " + model.string() +
                                                    " --candidates " + csv.string());
  ASSERT_EQ(select.exit_code, 0) << select.err;
  // --model, the spelling before --fit, still works for one release and says so.
  const auto old_spelling =
      testing::run_cli(kBinary, "energylens select --json --model " + model.string() +
                                    " --candidates " + csv.string());
  ASSERT_EQ(old_spelling.exit_code, 0) << old_spelling.err;
  EXPECT_EQ(old_spelling.out, select.out);
  EXPECT_NE(old_spelling.err.find("--model is deprecated"), std::string::npos) << old_spelling.err;
  EXPECT_NE(old_spelling.err.find("use --fit"), std::string::npos) << old_spelling.err;
  const Json s = Json::parse(select.out);
  ASSERT_EQ(s["scenarios"].size(), 2u);
  EXPECT_TRUE(s["scenarios"][0]["too_close_to_call"].is_boolean());
  EXPECT_TRUE(s["scenarios"][0]["ranking"][0]["close_to_best"].is_boolean());
}

// A 70B model's BF16 weights (141 GB) cannot load on one 80 GB H100: select marks TP1 and picks
// neither it as energy- nor as latency-optimal; a scenario where nothing fits says so.
TEST(EnergyLensCli, CandidatesThatCannotLoadTheirWeightsAreMarkedAndNeverPicked) {
  const fs::path csv = write_csv("kareus_el_cli_fit.csv", "Llama-3.1-8B", "NVIDIA H100 NVL");
  const fs::path model = fs::temp_directory_path() / "kareus_el_cli_fit_model.json";
  ASSERT_NO_FATAL_FAILURE(fit_to(csv, model, " --bags 1"));
  const fs::path candidates = fs::temp_directory_path() / "kareus_el_cli_70b.csv";
  std::ofstream(candidates) << "scenario,tp,pp,batch,output_tokens,time_s,model,gpu\n"
                               "chat,1,1,64,200,1.0,llama3.3-70b,h100-sxm\n"
                               "chat,2,1,64,200,2.0,llama3.3-70b,h100-sxm\n"
                               "chat,4,1,64,200,3.0,llama3.3-70b,h100-sxm\n"
                               "huge,1,1,64,200,1.0,meta-llama-3.1-405b-instruct,h100-sxm\n";
  const std::string args = " --fit " + model.string() + " --candidates " + candidates.string();
  const auto json = testing::run_cli(kBinary, "energylens select --json" + args);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const Json s = Json::parse(json.out);
  ASSERT_EQ(s["scenarios"].size(), 2u);
  const Json& chat = s["scenarios"][0];
  EXPECT_FALSE(chat["none_fits"].get<bool>());
  EXPECT_NE(chat["energy_optimal_line"], 2);   // line 2: TP1
  EXPECT_EQ(chat["latency_optimal_line"], 3);  // TP1 is faster, but cannot run
  for (const auto& r : chat["ranking"])
    EXPECT_EQ(r["memory"]["fits"].get<bool>(), r["tp"] != 1.0) << r.dump();
  EXPECT_EQ(chat["ranking"][2]["tp"], 1.0);  // ranked after every candidate that fits
  const Json& huge = s["scenarios"][1];
  EXPECT_TRUE(huge["none_fits"].get<bool>());
  EXPECT_TRUE(huge["energy_optimal_line"].is_null());
  EXPECT_TRUE(huge["latency_optimal_line"].is_null());
  const auto text = testing::run_cli(kBinary, "energylens select" + args);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("does not fit: weights 131.4 > 72.0 GiB"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("energy-optimal:  none: no candidate fits"), std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("energy-optimal:  tp=1 "), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("latency-optimal: tp=1 "), std::string::npos) << text.out;
  const auto predict =
      testing::run_cli(kBinary, "energylens predict --json --fit " + model.string() + " --data " +
                                    candidates.string());
  ASSERT_EQ(predict.exit_code, 0) << predict.err;
  const Json p = Json::parse(predict.out);
  EXPECT_FALSE(p["rows"][0]["memory"]["fits"].get<bool>());
  EXPECT_TRUE(p["rows"][1]["memory"]["fits"].get<bool>());
  const auto predict_text = testing::run_cli(
      kBinary, "energylens predict --fit " + model.string() + " --data " + candidates.string());
  EXPECT_NE(predict_text.out.find("does not fit"), std::string::npos) << predict_text.out;
}

// A KV cache that cannot hold one sequence of the model's maximum context (the config gives it)
// keeps vLLM from starting: marked with that reason and never picked. One that holds fewer
// requests than the batch only runs fewer: warned about once, not marked.
TEST(EnergyLensCli, KvCacheIsCheckedAgainstTheMaximumContextAndTheBatch) {
  const fs::path csv = write_csv("kareus_el_cli_kv.csv", "Llama-3.1-8B", "NVIDIA H100 NVL");
  const fs::path model = fs::temp_directory_path() / "kareus_el_cli_kv_model.json";
  ASSERT_NO_FATAL_FAILURE(fit_to(csv, model, " --bags 1"));
  // Llama-3.3-70B with its Hugging Face config's 131072-token context.
  const fs::path config = fs::temp_directory_path() / "kareus_el_cli_llama70b.json";
  std::ofstream(config) << R"({"hidden_size": 8192, "num_attention_heads": 64,
    "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 28672,
    "num_hidden_layers": 80, "vocab_size": 128256, "max_position_embeddings": 131072})";
  const fs::path candidates = fs::temp_directory_path() / "kareus_el_cli_kv_candidates.csv";
  // TP 2 leaves 41,241 tokens of KV cache, TP 4 513,100: 5131 requests in flight of 100 tokens
  // on average (half of their 200), fewer than a batch of 8192. The shipped llama3.3-70b config
  // gives no maximum context, nor does a user's config without the field, which a note names.
  const fs::path unbounded = fs::temp_directory_path() / "kareus_el_cli_unbounded.json";
  std::ofstream(unbounded) << R"({"hidden_size": 8192, "num_attention_heads": 64,
    "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 28672,
    "num_hidden_layers": 80, "vocab_size": 128256})";
  std::ofstream(candidates) << "scenario,tp,pp,batch,output_tokens,time_s,model,gpu\n"
                               "ctx,2,1,64,200,1.0,"
                            << config.string()
                            << ",h100-sxm\n"
                               "ctx,4,1,8192,200,2.0,"
                            << config.string()
                            << ",h100-sxm\n"
                               "shipped,2,1,64,200,1.0,llama3.3-70b,h100-sxm\n"
                               "user,2,1,64,200,1.0,"
                            << unbounded.string() << ",h100-sxm\n";
  const std::string args = " --fit " + model.string() + " --candidates " + candidates.string();
  const auto json = testing::run_cli(kBinary, "energylens select --json" + args);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const Json s = Json::parse(json.out);
  const Json& ctx = s["scenarios"][0];
  EXPECT_EQ(ctx["energy_optimal_line"], 3);
  EXPECT_EQ(ctx["latency_optimal_line"], 3);  // TP 2 is faster, but does not start
  const Json& tp2 = ctx["ranking"][1];
  EXPECT_EQ(tp2["tp"], 2.0);
  EXPECT_FALSE(tp2["memory"]["fits"].get<bool>());
  EXPECT_EQ(tp2["memory"]["reason"], "kv_cache");
  EXPECT_EQ(tp2["memory"]["kv_tokens"], 41241.0);
  EXPECT_EQ(tp2["memory"]["max_context"], 131072.0);
  EXPECT_FALSE(tp2["memory"]["batch_limited_by_kv"].get<bool>());
  const Json& tp4 = ctx["ranking"][0];
  EXPECT_TRUE(tp4["memory"]["fits"].get<bool>());
  EXPECT_TRUE(tp4["memory"]["reason"].is_null());
  EXPECT_EQ(tp4["memory"]["kv_concurrency"], 5131.0);  // floor(513,100 / 100)
  EXPECT_TRUE(tp4["memory"]["batch_limited_by_kv"].get<bool>());
  EXPECT_FALSE(tp4["memory"]["kv_prompt_counted"].get<bool>());
  const Json& shipped = s["scenarios"][1]["ranking"][0];
  EXPECT_TRUE(shipped["memory"]["fits"].get<bool>());  // not checked against a context
  EXPECT_TRUE(shipped["memory"]["max_context"].is_null());
  const std::string notes = s["notes"].dump();
  EXPECT_NE(notes.find("the configs of " + unbounded.string() + " give no max_position_embeddings"),
            std::string::npos)
      << notes;
  EXPECT_EQ(notes.find("llama3.3-70b"), std::string::npos) << notes;  // shipped: no note
  EXPECT_NE(notes.find("counts only each request's output tokens"), std::string::npos) << notes;
  EXPECT_NE(notes.find("line 3 ("), std::string::npos) << notes;

  const auto text = testing::run_cli(kBinary, "energylens select" + args);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("KV seqs (output only)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("does not fit: KV cache 41241 < max context 131072 tokens"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("energy-optimal:  tp=4 pp=1 batch=8192"), std::string::npos) << text.out;
  // The batch warning: one line, naming the configuration and the batch it runs at.
  std::size_t warnings = 0;
  for (std::size_t at = text.err.find("warning:"); at != std::string::npos;
       at = text.err.find("warning:", at + 1))
    ++warnings;
  EXPECT_EQ(warnings, 1u) << text.err;
  EXPECT_NE(text.err.find("tp=4 pp=1 batch=8192) runs about 5131 at once"), std::string::npos)
      << text.err;
  EXPECT_NE(text.err.find("note: "), std::string::npos) << text.err;

  const auto predict = testing::run_cli(
      kBinary, "energylens predict --fit " + model.string() + " --data " + candidates.string());
  ASSERT_EQ(predict.exit_code, 0) << predict.err;
  EXPECT_NE(predict.out.find("does not fit: KV cache"), std::string::npos) << predict.out;
  EXPECT_NE(predict.err.find("runs about 5131 at once"), std::string::npos) << predict.err;
}

// design picks the budget's number of distinct candidates, in its JSON and in its table, and
// --quiet keeps stderr empty.
TEST(EnergyLensCli, DesignListsTheBudgetOfDistinctCandidates) {
  const fs::path csv = write_csv("kareus_el_cli_design.csv", "Llama-3.1-8B", "h100-sxm");
  const auto json = testing::run_cli(
      kBinary, "energylens design --quiet --json --budget 4 --candidates " + csv.string());
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_TRUE(json.err.empty()) << json.err;
  const Json d = Json::parse(json.out);
  EXPECT_EQ(d["candidates"], 10);
  ASSERT_EQ(d["picks"].size(), 4u);
  std::set<int> lines;
  for (const Json& p : d["picks"]) {
    lines.insert(p["line"].get<int>());
    EXPECT_GT(p["gain"].get<double>(), 0.0);
  }
  EXPECT_EQ(lines.size(), 4u);
  const auto text =
      testing::run_cli(kBinary, "energylens design --budget 4 --candidates " + csv.string());
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("Measure these 4 of 10 candidates"), std::string::npos) << text.out;
}

// Notes about many models stay one line: the first five named, then how many more (sorted).
TEST(EnergyLensCli, ANoteNamesTheFirstFiveModelsAndCountsTheRest) {
  const fs::path csv = write_csv("kareus_el_cli_many.csv", "Llama-3.1-8B", "h100-sxm");
  const fs::path model = fs::temp_directory_path() / "kareus_el_cli_many_model.json";
  ASSERT_NO_FATAL_FAILURE(fit_to(csv, model, " --bags 1"));
  const fs::path candidates = fs::temp_directory_path() / "kareus_el_cli_many_candidates.csv";
  std::ofstream out(candidates);
  out << "scenario,tp,pp,batch,output_tokens,model,gpu\n";
  // Configs given by path, copied from the catalogue's (which give no maximum context): the note
  // is about a user's files, not the shipped ones.
  std::vector<std::string> paths;
  for (const char* m : {"chameleon-30b", "chameleon-7b", "codegemma-1.1-2b", "codegemma-7b",
                        "codellama-13b-hf", "codellama-34b-hf", "codellama-7b-hf"}) {
    const fs::path config =
        fs::temp_directory_path() / (std::string("kareus_el_cli_") + m + ".json");
    fs::copy_file(fs::path(std::getenv("KAREUS_DATA_DIR")) / "models" / (std::string(m) + ".json"),
                  config, fs::copy_options::overwrite_existing);
    paths.push_back(config.string());
    out << m << ",4,1,8,200," << config.string() << ",h100-sxm\n";
  }
  out.close();
  const auto r = testing::run_cli(kBinary, "energylens select --fit " + model.string() +
                                               " --candidates " + candidates.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("the configs of " + paths[0] + ", " + paths[1] + ", " + paths[2] + ", " +
                       paths[3] + ", " + paths[4] + ", and 2 more give no max_position"),
            std::string::npos)
      << r.err;
}

// fit bags by default; the bag's fit to all rows is the model --bags 1 fits with the same seed.
TEST(EnergyLensCli, BaggingIsTheDefault) {
  const fs::path csv = write_csv("kareus_el_cli_bags.csv", "Llama-3.1-8B", "NVIDIA H100 NVL");
  const fs::path bagged = fs::temp_directory_path() / "kareus_el_cli_bagged.json";
  const fs::path single = fs::temp_directory_path() / "kareus_el_cli_single.json";
  for (const auto& [out, flags] : {std::pair{bagged, std::string()}, {single, " --bags 1"}})
    ASSERT_NO_FATAL_FAILURE(fit_to(csv, out, flags));
  EXPECT_EQ(Json::parse(std::ifstream(bagged))["bags"].get<int>(), 10);
  auto predict = [&](const fs::path& model, const std::string& flags) {
    const auto r = testing::run_cli(kBinary, "energylens predict --json --fit " + model.string() +
                                                 " --data " + csv.string() + flags);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return Json::parse(r.out)["rows"][0]["predicted_energy_j"].get<double>();
  };
  EXPECT_EQ(Json::parse(std::ifstream(bagged))["params"],
            Json::parse(std::ifstream(single))["params"]);
  EXPECT_NE(predict(bagged, ""), predict(single, ""));
}

// Every command's normal output on the shipped datasets, whose ML.ENERGY scenario names run to
// 85 characters, keeps its lines within kLineWidth columns.
TEST(EnergyLensCli, EveryCommandsOutputFitsTheLineWidth) {
  const fs::path data = std::getenv("KAREUS_DATA_DIR");
  const fs::path dir = fs::temp_directory_path() / "kareus_el_cli_width";
  fs::create_directories(dir);
  const std::string ml = (dir / "ml.csv").string(), tpb = (dir / "tpb.csv").string();
  const std::string model = (dir / "m.json").string();
  const std::vector<std::string> commands = {
      "energylens import --format mlenergy-v2 " +
          (data / "energylens/mlenergy-v2/mlenergy_v2_llm_configs.csv").string() + " " + ml,
      "energylens import --format tokenpowerbench " +
          (data / "energylens/tokenpowerbench/tokenpowerbench_upstream_runs.csv").string() + " " +
          tpb,
      "energylens fit --bags 3 --bootstrap 3 --data " + ml + " --out " + model,
      "energylens predict --fit " + model + " --data " + ml,
      "energylens select --fit " + model + " --candidates " + ml,
      "energylens design --quiet --budget 12 --candidates " + ml,
      "energylens evaluate --quiet --seeds 1 --bags 1 --restarts 2 --data " + ml,
      "energylens discover --quiet --generations 5 --population 60 --islands 1 --data " + tpb};
  for (const std::string& command : commands) {
    const auto r = testing::run_cli(kBinary, command);
    ASSERT_EQ(r.exit_code, 0) << command << "\n" << r.err;
    ASSERT_FALSE(r.out.empty()) << command;
    std::istringstream lines(r.out);
    std::string line;
    std::size_t widest = 0;
    while (std::getline(lines, line)) {
      widest = std::max(widest, display_width(line));
      EXPECT_LE(display_width(line), kLineWidth) << command << "\n" << line;
    }
    RecordProperty(command.substr(0, command.find(" --")), std::to_string(widest));
  }
}

TEST(EnergyLensCli, RowsTheCataloguesCannotDescribeAreRefused) {
  const fs::path known = write_csv("kareus_el_cli_known.csv", "Llama-3.1-8B", "h100-sxm");
  const fs::path model = fs::temp_directory_path() / "kareus_el_cli_refuse_model.json";
  ASSERT_NO_FATAL_FAILURE(fit_to(known, model));
  const fs::path no_model = write_csv("kareus_el_cli_model.csv", "acme/Unknown-9B", "h100-sxm");
  const fs::path no_gpu = write_csv("kareus_el_cli_gpu.csv", "Llama-3.1-8B", "NVIDIA B300");
  const fs::path config = fs::temp_directory_path() / "kareus_el_cli_nolayers.json";
  std::ofstream(config) << R"({"hidden_size": 4096, "num_attention_heads": 32,
                             "intermediate_size": 11008, "vocab_size": 32000})";
  const fs::path no_field = write_csv("kareus_el_cli_field.csv", config.string(), "h100-sxm");
  const fs::path unnamed = write_csv("kareus_el_cli_unnamed.csv", "", "h100-sxm");
  for (const testing::BadInput& c : std::initializer_list<testing::BadInput>{
           {"energylens fit --data " + no_model.string(), "acme/Unknown-9B"},
           {"energylens fit --data " + no_gpu.string(), "NVIDIA B300"},
           {"energylens fit --data " + no_field.string(), "num_hidden_layers"},
           // A CSV without model names is fine for the paper's form: the message says how.
           {"energylens fit --data " + unnamed.string(), "or pass --descriptors off"},
           {"energylens evaluate --train-size 4 --seeds 1 --data " + no_model.string(),
            "acme/Unknown-9B"},
           {"energylens predict --fit " + model.string() + " --data " + no_gpu.string(),
            "NVIDIA B300"},
           {"energylens predict --data " + known.string(), "--fit is required"},
           {"energylens select --fit " + model.string() + " --model " + model.string() +
                " --candidates " + known.string(),
            "--model excludes --fit"}})
    testing::expect_rejected(kBinary, c);
}

// A raw public dataset where the canonical CSV belongs: the message names the import and its
// --format instead of a missing column.
TEST(EnergyLensCli, RawDatasetsAreSentToImportWithTheirFormat) {
  const fs::path ml = fs::temp_directory_path() / "kareus_el_cli_raw_ml.csv";
  std::ofstream(ml) << "workload,gpu,model,params_b,tp,pp,max_batch_reqs,energy_per_req_J,"
                       "avg_output_tokens,avg_tpot_s,avg_power_all_gpus_W\n"
                       "lm-arena-chat,H100,meta-llama/Llama-3.1-8B-Instruct,8,1,1,64,120,300,"
                       "0.02,600\n";
  const fs::path tpb = fs::temp_directory_path() / "kareus_el_cli_raw_tpb.csv";
  std::ofstream(tpb) << "engine,model,batch_size_field,fn_output_len,duration_s,"
                        "total_output_tokens,responses,gpu_avg_power_W,gpu_energy_J,"
                        "per_gpu_power_W\n"
                        "vllm,llama3-8b,8,256,10,2048,8,300,3000,gpu0=300\n";
  for (const testing::BadInput& c : std::initializer_list<testing::BadInput>{
           {"energylens evaluate --data " + ml.string(),
            "a raw mlenergy-v2 dataset, not the canonical EnergyLens CSV: convert it first with "
            "`kareus energylens import --format mlenergy-v2 " +
                ml.string()},
           {"energylens fit --data " + tpb.string(),
            "`kareus energylens import --format tokenpowerbench " + tpb.string()}})
    testing::expect_rejected(kBinary, c);
}

// Candidates run one wave of 16 requests capped at 400 tokens, or in steady state (no drain
// columns), each producing 200 tokens. The model is fitted on drained runs.
// Each test's files are named after it: ctest runs the tests of this fixture in parallel.
struct DrainFiles {
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::path model = fs::temp_directory_path() / ("kareus_el_cli_drain_model_" + test + ".json");
  fs::path drained = fs::temp_directory_path() / ("kareus_el_cli_drain_cand_" + test + ".csv");
  fs::path steady = fs::temp_directory_path() / ("kareus_el_cli_steady_cand_" + test + ".csv");

  DrainFiles() {
    const fs::path train =
        fs::temp_directory_path() / ("kareus_el_cli_drain_train_" + test + ".csv");
    std::ofstream out(train);
    out << "scenario,tp,pp,batch,output_tokens,energy_j,max_output_tokens,requests\n";
    // Energy per request follows the run's decode steps: waves x cap x batch / requests.
    for (double batch : {1.0, 4.0, 16.0, 64.0})
      for (double waves : {1.0, 2.5, 4.0}) {
        const double requests = std::ceil(waves * batch);
        const double steps = std::ceil(requests / batch) * 400.0 * batch / requests;
        out << "s,"
            << "1,1," << batch << ",200," << 0.5 * steps / std::sqrt(batch) + 3.0 << ",400,"
            << requests << "\n";
      }
    out.close();
    EXPECT_EQ(testing::run_cli(kBinary,
                               "energylens fit --descriptors off "
                               "--bags 1 --data " +
                                   train.string() + " --out " + model.string())
                  .exit_code,
              0);
    std::ofstream(drained) << "scenario,tp,pp,batch,output_tokens,max_output_tokens,requests\n"
                              "c,1,1,16,200,400,16\nc,1,1,4,200,400,4\n";
    std::ofstream(steady) << "scenario,tp,pp,batch,output_tokens\nc,1,1,16,200\nc,1,1,4,200\n";
  }

  Json run(const std::string& command, const fs::path& candidates, std::string* err) const {
    const auto r = testing::run_cli(
        kBinary, "energylens " + command + " --json --fit " + model.string() +
                     (command == "select" ? " --candidates " : " --data ") + candidates.string());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (err != nullptr) *err = r.err;
    return Json::parse(r.out);
  }
};

// Candidates that give the drain columns are predicted with the run's drain: the per-step terms
// count the wave's 400 steps instead of the request's 200 tokens, so a drained candidate costs
// the closed form's ratio more than the same configuration in steady state.
TEST(EnergyLensCli, CandidatesWithTheDrainColumnsArePredictedWithTheirDrain) {
  const DrainFiles f;
  const Json model = Json::parse(std::ifstream(f.model));
  EXPECT_TRUE(model["drained"].get<bool>());
  energylens::Params p{};
  for (std::size_t k = 0; k < energylens::kParams; ++k)
    p[k] = model["params"][std::string(energylens::parameter_info()[k].name)];
  energylens::Features x;
  x.batch = 16.0;
  x.output_tokens = 200.0;
  const double steady = energylens::closed_form(p, x);
  x.drain_tokens = 200.0;  // one wave: 400 steps for every request, 200 more than its output
  const double factor = energylens::closed_form(p, x) / steady;
  EXPECT_GT(factor, 1.2);

  const Json drained = f.run("predict", f.drained, nullptr);
  const Json plain = f.run("predict", f.steady, nullptr);
  const double ratio = drained["rows"][0]["predicted_energy_j"].get<double>() /
                       plain["rows"][0]["predicted_energy_j"].get<double>();
  EXPECT_NEAR(ratio, factor, 1e-9 * factor);
  // select ranks the same predictions.
  const Json selected = f.run("select", f.drained, nullptr);
  for (const auto& r : selected["scenarios"][0]["ranking"]) {
    if (r["line"] != 2) continue;
    EXPECT_DOUBLE_EQ(r["predicted_energy_j"].get<double>(),
                     drained["rows"][0]["predicted_energy_j"].get<double>());
  }
  EXPECT_TRUE(drained["notes"].empty());
}

// A model fitted on drained runs asked about candidates without the columns predicts them in
// steady state, and says so once, on stderr for text and in the JSON's notes, not both.
TEST(EnergyLensCli, SteadyStateCandidatesOfADrainedFitAreNoted) {
  const DrainFiles f;
  for (const char* command : {"predict", "select"}) {
    std::string err;
    const Json j = f.run(command, f.steady, &err);
    ASSERT_EQ(j["notes"].size(), 1u) << command;
    EXPECT_NE(j["notes"][0].get<std::string>().find("predicted in steady state"),
              std::string::npos);
    EXPECT_EQ(err, "") << command;
    const auto text = testing::run_cli(
        kBinary, std::string("energylens ") + command + " --fit " + f.model.string() +
                     (command == std::string("select") ? " --candidates " : " --data ") +
                     f.steady.string());
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_EQ(text.err, "note: " + j["notes"][0].get<std::string>() + "\n") << command;
  }
}

// A fresh fit's `drained` says what its ranges say (a `requests` range), but a file saved before
// the ranges were kept has only `drained`: it still notes steady-state candidates, and one older
// still (neither key) does not. So `drained` stays in the file rather than being derived.
TEST(EnergyLensCli, OldModelFilesKeepTheirDrainNote) {
  const DrainFiles f;
  Json model = Json::parse(std::ifstream(f.model));
  EXPECT_TRUE(model["drained"].get<bool>());
  EXPECT_TRUE(model["training_ranges"].contains("requests"));
  const fs::path old = fs::temp_directory_path() / "kareus_el_cli_drain_old_model.json";
  // Whether predict notes the steady state (a file without ranges also says it checks none).
  const auto notes_steady_state = [&](const Json& file) {
    std::ofstream(old) << file.dump();
    const auto r = testing::run_cli(kBinary, "energylens predict --json --fit " + old.string() +
                                                 " --data " + f.steady.string());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const Json notes = Json::parse(r.out)["notes"];
    return std::any_of(notes.begin(), notes.end(), [](const Json& n) {
      return n.get<std::string>().find("predicted in steady state") != std::string::npos;
    });
  };
  model.erase("training_ranges");
  EXPECT_TRUE(notes_steady_state(model));
  model.erase("drained");
  EXPECT_FALSE(notes_steady_state(model));
}

// Candidates beyond the training rows' batches are named with the variable, their value and the
// trained range: per candidate in the JSON, once on stderr for text; inside, nothing is said.
TEST(EnergyLensCli, CandidatesOutsideTheTrainingRangeAreNamed) {
  const fs::path csv = write_csv("kareus_el_cli_range.csv", "Llama-3.1-8B", "NVIDIA H100 NVL");
  const fs::path model = fs::temp_directory_path() / "kareus_el_cli_range_model.json";
  ASSERT_NO_FATAL_FAILURE(fit_to(csv, model, " --bags 3"));
  const fs::path far = fs::temp_directory_path() / "kareus_el_cli_range_cand.csv";
  std::ofstream(far) << "scenario,tp,pp,batch,output_tokens,model,gpu\n"
                        "c,1,1,64,200,Llama-3.2-3B,NVIDIA H100 NVL\n"
                        "c,1,1,1024,200,Llama-3.2-3B,NVIDIA H100 NVL\n";
  for (const std::string command : {"predict", "select"}) {
    const std::string args = "energylens " + command + " --fit " + model.string() +
                             (command == "select" ? " --candidates " : " --data ");
    const auto j = testing::run_cli(kBinary, args + far.string() + " --json");
    ASSERT_EQ(j.exit_code, 0) << j.err;
    EXPECT_EQ(j.err, "");
    const Json out = Json::parse(j.out);
    const Json& rows = command == "select" ? out["scenarios"][0]["ranking"] : out["rows"];
    for (const auto& row : rows) {
      const bool far_row = row["line"] == 3;
      ASSERT_EQ(row["outside_training_range"].size(), far_row ? 1u : 0u) << command;
      if (!far_row) continue;
      EXPECT_EQ(row["outside_training_range"][0]["variable"], "batch");
      EXPECT_EQ(row["outside_training_range"][0]["value"], 1024.0);
      EXPECT_EQ(row["outside_training_range"][0]["trained_high"], 256.0);
    }
    // The other notes are the memory check's (its own test below).
    std::vector<std::string> range_notes;
    for (const auto& n : out["notes"])
      if (n.get<std::string>().find("outside the training rows' range") != std::string::npos)
        range_notes.push_back(n.get<std::string>());
    ASSERT_EQ(range_notes.size(), 1u) << out["notes"].dump();
    EXPECT_NE(range_notes[0].find("line 3 batch 1024 (trained 1..256)"), std::string::npos);
    const auto text = testing::run_cli(kBinary, args + far.string());
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.err.find("note: " + range_notes[0] + "\n"), std::string::npos) << text.err;
    const auto inside = testing::run_cli(kBinary, args + csv.string());
    ASSERT_EQ(inside.exit_code, 0) << inside.err;
    EXPECT_EQ(inside.err.find("outside the training"), std::string::npos) << command;
  }
}

}  // namespace
}  // namespace kareus
