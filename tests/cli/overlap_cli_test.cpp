// SPDX-License-Identifier: Apache-2.0
// kareus overlap end to end: the JSON contract, the sweep, and bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/run_cli.hpp"

namespace kareus {
namespace {

using testing::expect_rejected;
using testing::run_cli;

const std::string kPair =
    "overlap --gpu a100-sxm4-40gb --compute gemm --shape 8192x8192x8192 --collective allreduce "
    "--bytes 64MiB --ranks 4 --clock 1200";

TEST(OverlapCli, ReportsThePairAloneBackToBackAndOverlapped) {
  const auto r = run_cli(KAREUS_BINARY, kPair + " --comm-sms 8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["results"].size(), 1u);
  const auto& x = doc["results"][0];
  EXPECT_EQ(x["comm_sms"], 8);
  EXPECT_EQ(doc["collective"]["bytes"], 64.0 * 1024 * 1024);
  // 2(n-1)/n of the buffer crosses the links in an AllReduce over n = 4 GPUs.
  EXPECT_DOUBLE_EQ(doc["collective"]["bus_bytes"].get<double>(), 1.5 * 64 * 1024 * 1024);
  const double alone = x["compute_alone_s"].get<double>() + x["collective_alone_s"].get<double>();
  EXPECT_NEAR(x["serial_s"].get<double>(), alone, 1e-12);
  EXPECT_LT(x["overlapped_s"].get<double>(), x["serial_s"].get<double>());
  EXPECT_GT(x["overlapped_s"].get<double>(), x["compute_alone_s"].get<double>());
  // The published A100 range for 8 CTAs: the GEMM is stretched 1.2-1.6 while both run.
  EXPECT_GE(x["compute_stretch"].get<double>(), 1.2);
  EXPECT_LE(x["compute_stretch"].get<double>(), 1.6);
  EXPECT_GT(x["collective_stretch"].get<double>(), 1.0);
  EXPECT_GT(x["power_w"]["overlapped"].get<double>(), x["power_w"]["serial"].get<double>());
  EXPECT_NEAR(x["energy_j"]["serial"].get<double>(),
              x["energy_j"]["compute_alone"].get<double>() +
                  x["energy_j"]["collective_alone"].get<double>(),
              1e-9);
}

TEST(OverlapCli, SweepsSmCountsInOneTable) {
  const auto r = run_cli(KAREUS_BINARY, kPair + " --sweep-sms 1..32 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = nlohmann::json::parse(r.out)["results"];
  ASSERT_EQ(rows.size(), 32u);
  for (std::size_t i = 1; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i]["comm_sms"], static_cast<int>(i) + 1);
    // More SMs: a faster collective alone, a more stretched GEMM.
    EXPECT_LT(rows[i]["collective_alone_s"].get<double>(),
              rows[i - 1]["collective_alone_s"].get<double>());
    EXPECT_GT(rows[i]["compute_stretch"].get<double>(),
              rows[i - 1]["compute_stretch"].get<double>());
  }
  const auto text = run_cli(KAREUS_BINARY, kPair + " --sweep-sms 4..6");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("comm SMs"), std::string::npos) << text.out;
}

TEST(OverlapCli, AttentionAndElementwiseShapes) {
  for (const char* compute :
       {"--compute attention --shape 4x32x4096x128", "--compute elementwise --shape 100000000"}) {
    const auto r =
        run_cli(KAREUS_BINARY, std::string("overlap --gpu h100-sxm --collective allgather --bytes "
                                           "256MB --ranks 8 --governor default --json ") +
                                   compute);
    ASSERT_EQ(r.exit_code, 0) << compute << ": " << r.err;
    const auto x = nlohmann::json::parse(r.out)["results"][0];
    EXPECT_EQ(x["comm_sms"], 32) << "the H100's NCCL channel count by default";
    EXPECT_GT(x["compute_stretch"].get<double>(), 1.0);
  }
}

TEST(OverlapCli, BadInputIsOneLineAndExitTwo) {
  const std::string base =
      "overlap --gpu a100-sxm4-40gb --shape 4096x4096x4096 --bytes 64MiB --ranks 4 ";
  const testing::BadInput cases[] = {
      {base + "--collective broadcast", "--collective"},
      {"overlap --gpu a100-sxm4-40gb --shape 4096x4096x4096 --bytes 64MiB --ranks 0", "--ranks"},
      {base + "--comm-sms 200", "--comm-sms"},
      {base + "--comm-sms 0", "--comm-sms"},
      {base + "--sweep-sms 1..108", "--sweep-sms"},
      {base + "--sweep-sms 8..4", "--sweep-sms"},
      {"overlap --gpu a100-sxm4-40gb --shape 4096x4096x4096 --ranks 4 --bytes 64MiBs", "--bytes"},
      {"overlap --gpu a100-sxm4-40gb --shape 4096x4096x4096 --ranks 4 --bytes -5", "--bytes"},
      {"overlap --gpu a100-sxm4-40gb --shape 4096x4096x4096 --ranks 4 --bytes 1e400", "--bytes"},
      {"overlap --gpu a100-sxm4-40gb --shape 4096x4096x4096 --ranks 4", "--bytes"},
      {base + "--shape 4096x4096", "--shape"},
      {base + "--compute attention --shape 4x32x4096", "--shape"},
      {base + "--dtype fp8", "--dtype"},
      {base + "--compute conv", "--compute"},
      {base + "--clock 1000", "--clock"},
      {base + "--clock nan", "--clock"},
      {base + "--executor tpu", "--executor"},
      {base + "--executor cuda --clock 1200", "--clock"},
      {"overlap --gpu v100 --shape 4096x4096x4096 --bytes 64MiB", "v100"},
  };
  for (const auto& c : cases) expect_rejected(KAREUS_BINARY, c);
}

}  // namespace
}  // namespace kareus
