// SPDX-License-Identifier: Apache-2.0
// Checks before the first clock change (job shape, GPU model), CUDA -> NVML device mapping and
// partition-granularity clocks, against the fake NVML.
#include "kareus/runtime/job_check.hpp"

#include <gtest/gtest.h>

#include "common/error_of.hpp"
#include "common/two_stages.hpp"
#include "fake_nvml/fake_nvml_fixture.hpp"
#include "kareus/runtime/device_map.hpp"
#include "kareus/runtime/frequency_controller.hpp"

namespace kareus::runtime {
namespace {

using kareus::testing::error_of;
using kareus::testing::FakeNvml;
using kareus::testing::two_gpu_script;
using Lines = std::vector<std::string>;

using kareus::testing::kTwoStagesSchedule;

std::unique_ptr<FrequencyController> make(const Schedule& s, int stage, unsigned gpu,
                                          ControllerOptions o = {}) {
  auto nvml = std::make_shared<const nvml::Nvml>();
  return std::make_unique<FrequencyController>(s, stage,
                                               std::make_unique<NvmlClockBackend>(nvml, gpu), o);
}

TEST(JobCheck, GpuNamesOfOneModelMatchAcrossSpellings) {
  EXPECT_TRUE(same_gpu_model("a100-sxm4-40gb", "NVIDIA A100-SXM4-40GB"));
  EXPECT_TRUE(same_gpu_model("NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB"));
  EXPECT_TRUE(same_gpu_model("h200", "NVIDIA H200"));
  EXPECT_TRUE(same_gpu_model("rtx3080ti", "NVIDIA GeForce RTX 3080 Ti"));
  EXPECT_TRUE(same_gpu_model("h100-sxm", "NVIDIA H100 80GB HBM3"));
  EXPECT_FALSE(same_gpu_model("a100-sxm4-80gb", "NVIDIA A100-SXM4-40GB"));
  EXPECT_FALSE(same_gpu_model("h100-sxm", "NVIDIA A100-SXM4-40GB"));
  EXPECT_FALSE(same_gpu_model("a40", "NVIDIA A100-SXM4-40GB"));
  EXPECT_FALSE(same_gpu_model("", "NVIDIA A100-SXM4-40GB"));
}

TEST(JobCheck, EveryMismatchInOneMessageAndNoClockTouched) {
  FakeNvml fake;
  const Schedule s =
      load_schedule(kareus::testing::kTwoStagesSchedule);  // 2 stages, 3 microbatches, A100
  ControllerOptions o;
  o.job.pipeline_stages = 4;
  o.job.microbatches = 8;
  // GPU 1 is the RTX 3080 Ti: the A100 schedule must not run there.
  const std::string message = error_of([&] { make(s, 0, 1, o); });
  EXPECT_NE(message.find("2 pipeline stage(s), the job runs 4"), std::string::npos) << message;
  EXPECT_NE(message.find("3 microbatch(es) per iteration, the job 8"), std::string::npos);
  EXPECT_NE(message.find("this GPU is NVIDIA GeForce RTX 3080 Ti"), std::string::npos);
  EXPECT_NE(message.find("no clock was changed"), std::string::npos);
  EXPECT_EQ(fake.log(), Lines{});

  o.job.pipeline_stages = 2;
  o.job.microbatches = 3;
  EXPECT_NO_THROW(make(s, 0, 0, o));
  o.check_gpu_model = false;
  EXPECT_NO_THROW(make(s, 0, 1, o));
}

JobShape layout(const std::string& model, int tp, int cp, int dp, const std::string& recompute,
                int virtual_pipeline_stages) {
  JobShape job;
  job.model = model;
  job.tp = tp;
  job.cp = cp;
  job.dp = dp;
  job.recompute = recompute;
  job.virtual_pipeline_stages = virtual_pipeline_stages;
  return job;
}

TEST(JobCheck, ParallelSizesModelRecomputeAndSharedGpusInOneMessage) {
  const Schedule s = load_schedule(
      kareus::testing::kTwoStagesSchedule);  // llama3.2-3b, TP 8, CP 1, DP 1, full recompute
  JobShape job = layout("qwen3-1.7b", 4, 2, 2, "none", 2);
  job.pipeline_stages = 2;  // right
  job.rank = 0;
  job.ranks_sharing_gpu = {1, 3};
  const std::string message = job_mismatches(s, job);
  for (const char* part :
       {"the schedule was planned for model llama3.2-3b, the job's is qwen3-1.7b",
        "tensor-parallel size 8, the job runs 4", "context-parallel size 1, the job runs 2",
        "data-parallel size 1, the job runs 2",
        "the schedule was planned for recompute mode full, the job's is none",
        "interleaved (virtual-pipeline) 1F1B with 2 model chunks per pipeline rank",
        "rank 0 shares its GPU with rank(s) 1, 3"})
    EXPECT_NE(message.find(part), std::string::npos) << part << "\n" << message;
  EXPECT_EQ(message.find("pipeline stage(s)"), std::string::npos) << message;

  job = layout("llama3.2-3b", 8, 1, 1, "full", 1);
  EXPECT_EQ(job_mismatches(s, job), "");

  Schedule bare = s;
  bare.workload = Json::object();  // a schedule that does not record its workload
  EXPECT_NE(job_mismatches(bare, layout("llama3.2-3b", 2, 0, 0, "", 0))
                .find("the schedule records no tensor-parallel size (workload.parallelism.tp)"),
            std::string::npos);
}

TEST(DeviceMap, CudaIndicesFollowCudaVisibleDevices) {
  const std::vector<std::string> uuids = {"GPU-aaaa-0", "GPU-bbbb-1", "GPU-cccc-2", "GPU-dddd-3"};
  EXPECT_EQ(nvml_index_of_cuda_device(2, std::nullopt, uuids), 2u);
  EXPECT_EQ(nvml_index_of_cuda_device(0, "3,1", uuids), 3u);
  EXPECT_EQ(nvml_index_of_cuda_device(1, "3,1", uuids), 1u);
  EXPECT_EQ(nvml_index_of_cuda_device(1, "GPU-dddd-3,GPU-aaaa-0", uuids), 0u);
  EXPECT_EQ(nvml_index_of_cuda_device(0, " cccc ", uuids), 2u);  // unique prefix without GPU-
  // CUDA ignores everything from the first entry that names no device.
  const std::string beyond = error_of([&] { nvml_index_of_cuda_device(1, "2,9,1", uuids); });
  EXPECT_NE(beyond.find("makes visible: 1 (NVML device(s) 2)"), std::string::npos) << beyond;
  EXPECT_NE(beyond.find("entry \"9\" names no GPU of this machine (NVML devices 0..3"),
            std::string::npos)
      << beyond;
  // The first entry names no GPU: the message names it rather than an empty device list.
  const std::string first = error_of([&] { nvml_index_of_cuda_device(0, "5,0", uuids); });
  EXPECT_NE(first.find("CUDA_VISIBLE_DEVICES=\"5,0\" makes visible: none; its entry \"5\""),
            std::string::npos)
      << first;
  EXPECT_NE(error_of([&] { nvml_index_of_cuda_device(0, "", uuids); }).find("entry \"\""),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              nvml_index_of_cuda_device(4, std::nullopt, uuids);
            }).find("CUDA_VISIBLE_DEVICES=(unset) makes visible: 4 (NVML device(s) 0, 1, 2, 3)"),
            std::string::npos);
  EXPECT_NE(error_of([&] { nvml_index_of_cuda_device(0, "GPU-", uuids); }).find("unique"),
            std::string::npos);
  EXPECT_NE(error_of([&] { nvml_index_of_cuda_device(0, "MIG-x", uuids); }).find("MIG"),
            std::string::npos);
}

TEST(DeviceMap, ResolvesUuidsThroughNvml) {
  auto script = two_gpu_script();
  script["devices"][0]["uuid"] = "GPU-5a1c0fd2-0000";
  script["devices"][1]["uuid"] = "GPU-77e3aa01-0000";
  FakeNvml fake(script);
  const nvml::Nvml nvml;
  setenv("CUDA_VISIBLE_DEVICES", "GPU-77e3aa01-0000,GPU-5a1c0fd2-0000", 1);
  EXPECT_EQ(nvml_index_of_cuda_device(nvml, 0), 1u);
  EXPECT_EQ(nvml_index_of_cuda_device(nvml, 1), 0u);
  setenv("CUDA_VISIBLE_DEVICES", "1", 1);
  EXPECT_EQ(nvml_index_of_cuda_device(nvml, 0), 1u);
  unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(nvml_index_of_cuda_device(nvml, 1), 1u);
}

Schedule with_step_clocks() {
  Schedule s = load_schedule(kareus::testing::kTwoStagesSchedule);
  ScheduleInstruction& f0 = s.stages[0].instructions[0];  // forward 0 at 930 MHz, nanobatch
  f0.step_clocks = {MHz(930), MHz(1200), MHz(1200), MHz(990)};
  validate_schedule(s, "test");
  return s;
}

TEST(FrequencyController, RefusesStepClocksUnlessTheHostReportsSteps) {
  FakeNvml fake;
  const std::string message = error_of([&] { make(with_step_clocks(), 0, 0); });
  EXPECT_NE(message.find("step_clocks_mhz"), std::string::npos) << message;
  EXPECT_NE(message.find("on_instruction_step"), std::string::npos);
  EXPECT_EQ(fake.log(), Lines{});
}

TEST(FrequencyController, AppliesStepClocksAsStepsBegin) {
  FakeNvml fake;
  ControllerOptions o;
  o.partition_clocks = true;
  {
    auto c = make(with_step_clocks(), 0, 0, o);
    EXPECT_NE(error_of([&] { c->on_instruction_step(0); }).find("before any instruction"),
              std::string::npos);
    c->on_instruction_begin(0, 0, "forward");
    for (int step = 0; step < 4; ++step) c->on_instruction_step(step);
    EXPECT_NE(error_of([&] { c->on_instruction_step(4); }).find("steps 0..3"), std::string::npos);
    c->on_instruction_begin(0, 1, "forward");  // 930 MHz, no steps
    c->on_instruction_step(0);
    EXPECT_NE(error_of([&] { c->on_instruction_step(1); }).find("steps 0..0"), std::string::npos);
    c->wait_until_applied();
  }
  EXPECT_EQ(
      fake.log(),
      (Lines{"nvmlDeviceSetGpuLockedClocks 0 930 930", "nvmlDeviceSetGpuLockedClocks 0 1200 1200",
             "nvmlDeviceSetGpuLockedClocks 0 990 990", "nvmlDeviceSetGpuLockedClocks 0 930 930",
             "nvmlDeviceResetGpuLockedClocks 0"}));
}

TEST(FrequencyController, LocksTheMemoryClockAtItsMaximumUntilRestore) {
  FakeNvml fake;
  const Schedule s = load_schedule(kareus::testing::kTwoStagesSchedule);
  ControllerOptions o;
  o.lock_memory_clock = true;
  {
    auto c = make(s, 0, 0, o);  // the fake A100 lists one memory clock, 1215 MHz
    c->on_instruction_begin(0, 0, "forward");
    c->wait_until_applied();
  }
  EXPECT_EQ(fake.log(),
            (Lines{"nvmlDeviceSetMemoryLockedClocks 0 1215 1215",
                   "nvmlDeviceSetGpuLockedClocks 0 930 930", "nvmlDeviceResetMemoryLockedClocks 0",
                   "nvmlDeviceResetGpuLockedClocks 0"}));
}

TEST(FrequencyController, MemoryLockOnTheHighestOfSeveralMemoryClocks) {
  FakeNvml fake;
  Schedule s = load_schedule(kareus::testing::kTwoStagesSchedule);
  s.gpu = "NVIDIA GeForce RTX 3080 Ti";
  ControllerOptions o;
  o.lock_memory_clock = true;
  make(s, 0, 1, o);  // never sets an SM clock: only the memory lock and its reset
  EXPECT_EQ(fake.log(), (Lines{"nvmlDeviceSetMemoryLockedClocks 1 9501 9501",
                               "nvmlDeviceResetMemoryLockedClocks 1"}));
}

}  // namespace
}  // namespace kareus::runtime
