// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/dataset.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "kareus/core/error.hpp"

namespace kareus::energylens {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_dataset(text, "bad.csv");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

const std::string kHeader = "scenario,tp,pp,batch,output_tokens,energy_j\n";

TEST(EnergyLensDataset, ReadsRequiredAndOptionalColumns) {
  const Dataset d = parse_dataset(
      "scenario,tp,pp,dp,batch,output_tokens,input_tokens,energy_j,model,gpu,time_s,power_w\n"
      "s1,2,1,1,64,200,100,55.5,m,A100,1.5,300\n"
      "s1,4,1,,128,210,100,50,m,A100,2.0,\n",
      "ok.csv");
  ASSERT_EQ(d.samples.size(), 2u);
  EXPECT_TRUE(d.has_input_tokens);
  EXPECT_TRUE(d.has_time);
  EXPECT_EQ(d.samples[0].tp, 2.0);
  EXPECT_EQ(d.samples[1].dp, 1.0);
  EXPECT_EQ(d.samples[1].line, 3u);
  EXPECT_FALSE(d.samples[1].power.has_value());
  EXPECT_DOUBLE_EQ(d.energy_j(0), 55.5);
  // Written and read back, the rows are the same.
  const Dataset back = parse_dataset(dataset_to_csv(d), "back.csv");
  ASSERT_EQ(back.samples.size(), 2u);
  EXPECT_DOUBLE_EQ(back.samples[1].batch, 128.0);
  EXPECT_DOUBLE_EQ(*back.samples[0].input_tokens, 100.0);
}

// A row measured over a whole run keeps its duration and metered GPUs through a round trip; a
// steady-state row (no run_s) has neither, and a file without them writes neither column.
TEST(EnergyLensDataset, ReadsAndWritesTheRunColumns) {
  const Dataset d = parse_dataset(
      "scenario,tp,pp,batch,output_tokens,energy_j,run_s,gpus_metered\n"
      "s1,1,1,64,200,55.5,2.5,4\n"
      "s1,2,1,64,200,50,,\n",
      "runs.csv");
  EXPECT_TRUE(d.has_run);
  EXPECT_DOUBLE_EQ(d.samples[0].run->value(), 2.5);
  EXPECT_EQ(d.samples[0].gpus_metered, 4.0);
  EXPECT_FALSE(d.samples[1].run.has_value());
  EXPECT_FALSE(d.samples[1].gpus_metered.has_value());
  const Dataset back = parse_dataset(dataset_to_csv(d), "back.csv");
  EXPECT_DOUBLE_EQ(back.samples[0].run->value(), 2.5);
  EXPECT_EQ(back.samples[0].gpus_metered, 4.0);
  EXPECT_FALSE(back.samples[1].run.has_value());
  const std::string steady = dataset_to_csv(parse_dataset(kHeader + "s,1,1,8,100,5\n", "s.csv"));
  EXPECT_EQ(steady.find("run_s"), std::string::npos);
}

TEST(EnergyLensDataset, RejectsBadRunColumns) {
  const std::string header = "scenario,tp,pp,batch,output_tokens,energy_j,run_s,gpus_metered\n";
  const std::string zero_run = error_of(header + "s,1,1,8,100,5,0,1\n");
  EXPECT_NE(zero_run.find("bad.csv:2"), std::string::npos) << zero_run;
  EXPECT_NE(zero_run.find("run_s"), std::string::npos) << zero_run;
  const std::string few = error_of(header + "s,4,1,8,100,5,3,2\n");
  EXPECT_NE(few.find("bad.csv:2"), std::string::npos) << few;
  EXPECT_NE(few.find("gpus_metered"), std::string::npos) << few;
  EXPECT_NE(few.find("at least tp x pp x dp"), std::string::npos) << few;
}

// The run's drain: the output cap and the run's requests survive a round trip, and a file without
// them writes neither column.
TEST(EnergyLensDataset, ReadsAndWritesTheDrainColumns) {
  const Dataset d = parse_dataset(
      "scenario,tp,pp,dp,batch,output_tokens,energy_j,max_output_tokens,requests\n"
      "s1,1,1,2,64,200,55.5,512,128\n"
      "s1,2,1,1,32,300,50,512,32\n",
      "drain.csv");
  EXPECT_TRUE(d.has_drain);
  EXPECT_EQ(d.samples[0].max_output_tokens, 512.0);
  EXPECT_EQ(d.samples[1].requests, 32.0);
  const Dataset back = parse_dataset(dataset_to_csv(d), "back.csv");
  EXPECT_TRUE(back.has_drain);
  EXPECT_EQ(back.samples[0].requests, 128.0);
  EXPECT_EQ(back.samples[1].max_output_tokens, 512.0);
  const std::string steady = dataset_to_csv(parse_dataset(kHeader + "s,1,1,8,100,5\n", "s.csv"));
  EXPECT_EQ(steady.find("requests"), std::string::npos);
  EXPECT_FALSE(parse_dataset(kHeader + "s,1,1,8,100,5\n", "s.csv").has_drain);
}

// The server's context: kept per row (a blank cell leaves the config's), written back only by a
// file that has it, and a positive integer.
TEST(EnergyLensDataset, ReadsAndWritesTheServersContext) {
  const std::string header = "scenario,tp,pp,batch,output_tokens,energy_j,max_model_len\n";
  const Dataset d = parse_dataset(header + "s,1,1,8,100,5,8192\ns,2,1,8,100,5,\n", "ctx.csv");
  EXPECT_TRUE(d.has_max_model_len);
  EXPECT_EQ(d.samples[0].max_model_len, 8192.0);
  EXPECT_FALSE(d.samples[1].max_model_len.has_value());
  const Dataset back = parse_dataset(dataset_to_csv(d), "back.csv");
  EXPECT_EQ(back.samples[0].max_model_len, 8192.0);
  EXPECT_FALSE(back.samples[1].max_model_len.has_value());
  EXPECT_EQ(
      dataset_to_csv(parse_dataset(kHeader + "s,1,1,8,100,5\n", "s.csv")).find("max_model_len"),
      std::string::npos);
  for (const auto& [bad, allowed] :
       std::map<std::string, std::string>{{"0", "positive integer"},
                                          {"-1", "positive integer"},
                                          {"4096.5", "an integer"},
                                          {"long", "a finite number"}}) {
    const std::string e = error_of(header + "s,1,1,8,100,5," + bad + "\n");
    EXPECT_NE(e.find("bad.csv:2: column 'max_model_len' = " + bad), std::string::npos) << e;
    EXPECT_NE(e.find(allowed), std::string::npos) << e;
  }
}

// Each bad drain value is one error naming the line, the column and what is allowed.
TEST(EnergyLensDataset, RejectsBadDrainColumns) {
  const std::string header =
      "scenario,tp,pp,dp,batch,output_tokens,energy_j,max_output_tokens,requests\n";
  const auto expect_error = [&](const std::string& rows, const std::string& line,
                                const std::string& column, const std::string& allowed) {
    const std::string e = error_of(header + rows);
    EXPECT_NE(e.find("bad.csv:" + line + ": column '" + column + "'"), std::string::npos) << e;
    EXPECT_NE(e.find(allowed), std::string::npos) << e;
  };
  expect_error("s,1,1,1,8,100,5,0,8\n", "2", "max_output_tokens", "positive integer");
  expect_error("s,1,1,1,8,100,5,128.5,8\n", "2", "max_output_tokens", "integer");
  expect_error("s,1,1,1,8,100,5,128,-8\n", "2", "requests", "positive integer");
  expect_error("s,1,1,1,8,100,5,128,4\n", "2", "requests", "at least batch x dp");
  expect_error("s,1,1,2,8,100,5,128,12\n", "2", "requests", "at least batch x dp");
  expect_error("s,1,1,1,8,100,5,128,\n", "2", "requests", "go together");
  expect_error("s,1,1,1,8,100,5,,8\n", "2", "max_output_tokens", "go together");
  expect_error("s,1,1,1,8,100,5,128,8\ns,1,1,1,8,100,5,,\n", "3", "requests", "every row must");
}

TEST(EnergyLensDataset, RejectsMissingColumnNamingIt) {
  const std::string e = error_of("scenario,tp,pp,batch,energy_j\ns,1,1,8,3\n");
  EXPECT_NE(e.find("bad.csv"), std::string::npos) << e;
  EXPECT_NE(e.find("output_tokens"), std::string::npos) << e;
}

TEST(EnergyLensDataset, RejectsNonPositiveValuesWithLineAndColumn) {
  const std::string e = error_of(kHeader + "s,1,1,8,100,10\ns,1,1,8,100,-3\n");
  EXPECT_NE(e.find("bad.csv:3"), std::string::npos) << e;
  EXPECT_NE(e.find("energy_j"), std::string::npos) << e;
  EXPECT_NE(e.find("positive"), std::string::npos) << e;
  const std::string zero_batch = error_of(kHeader + "s,1,1,0,100,10\n");
  EXPECT_NE(zero_batch.find("bad.csv:2"), std::string::npos) << zero_batch;
  EXPECT_NE(zero_batch.find("batch"), std::string::npos) << zero_batch;
}

TEST(EnergyLensDataset, RejectsMissingRequiredValue) {
  const std::string e = error_of(kHeader + "s,1,,8,100,10\n");
  EXPECT_NE(e.find("bad.csv:2"), std::string::npos) << e;
  EXPECT_NE(e.find("'pp'"), std::string::npos) << e;
  const std::string scen = error_of(kHeader + ",1,1,8,100,10\n");
  EXPECT_NE(scen.find("scenario"), std::string::npos) << scen;
}

TEST(EnergyLensDataset, RejectsFractionalParallelismAndText) {
  EXPECT_NE(error_of(kHeader + "s,1.5,1,8,100,10\n").find("'tp'"), std::string::npos);
  EXPECT_NE(error_of(kHeader + "s,1,1,8,many,10\n").find("output_tokens"), std::string::npos);
}

TEST(EnergyLensDataset, RejectsInputTokensOnSomeRowsOnly) {
  const std::string e = error_of(
      "scenario,tp,pp,batch,output_tokens,input_tokens,energy_j\n"
      "s,1,1,8,100,50,10\n"
      "s,1,1,16,100,,9\n");
  EXPECT_NE(e.find("bad.csv:3"), std::string::npos) << e;
  EXPECT_NE(e.find("input_tokens"), std::string::npos) << e;
}

// The workload column is optional, but once present every row names one: an empty value would
// silently form a group of its own.
TEST(EnergyLensDataset, ReadsWorkloadsAndRejectsAnEmptyOne) {
  const Dataset d = parse_dataset(
      "scenario,tp,pp,batch,output_tokens,energy_j,workload\n"
      "s,1,1,8,100,10,chat\n"
      "t,1,1,8,100,9,code\n",
      "ok.csv");
  EXPECT_TRUE(d.has_workload);
  EXPECT_EQ(d.samples[1].workload, "code");
  const Dataset back = parse_dataset(dataset_to_csv(d), "back.csv");
  EXPECT_EQ(back.samples[0].workload, "chat");
  EXPECT_FALSE(parse_dataset(kHeader + "s,1,1,8,100,10\n", "ok.csv").has_workload);
  const std::string e = error_of(
      "scenario,tp,pp,batch,output_tokens,energy_j,workload\n"
      "s,1,1,8,100,10,chat\n"
      "s,1,1,16,100,9,\n");
  EXPECT_NE(e.find("bad.csv:3"), std::string::npos) << e;
  EXPECT_NE(e.find("workload"), std::string::npos) << e;
}

TEST(EnergyLensDataset, RejectsEmptyFileAndAllowsCandidatesWithoutEnergy) {
  EXPECT_NE(error_of(kHeader).find("no data rows"), std::string::npos);
  const Dataset c = parse_dataset("scenario,tp,pp,batch,output_tokens\ns,1,1,8,100\n", "c.csv",
                                  EnergyColumn::kOptional);
  EXPECT_FALSE(c.samples[0].energy.has_value());
}

TEST(EnergyLensDataset, ReportsFileThatCannotBeOpened) {
  try {
    read_dataset("/nonexistent/energy.csv");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/energy.csv"), std::string::npos);
  }
}

}  // namespace
}  // namespace kareus::energylens
