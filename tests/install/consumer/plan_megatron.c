// SPDX-License-Identifier: Apache-2.0
/* A user's program against an installed Kareus: plans the megatron baseline of the catalogue
 * model named on the command line, so libkareus.so must find the installed catalogue on its own. */
#include <kareus/kareus.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: plan_megatron <catalogue model>\n");
    return 2;
  }
  kareus_workload w;
  kareus_workload_init(&w);
  w.model = argv[1];
  w.gpu = "a100-sxm4-40gb";
  w.tp = 8;
  w.pp = 2;
  w.microbatch_size = 8;
  w.sequence_length = 4096;
  w.microbatches = 4;
  kareus_plan_options o;
  kareus_plan_options_init(&o);
  o.methods = "megatron";
  kareus_plan* plan = NULL;
  if (kareus_plan_create(&w, &o, &plan) != KAREUS_OK) {
    fprintf(stderr, "plan_megatron: %s\n", kareus_last_error());
    return 1;
  }
  size_t points = 0;
  const kareus_status status = kareus_plan_frontier_size(plan, "megatron", &points);
  kareus_plan_free(plan);
  if (status != KAREUS_OK || points == 0) {
    fprintf(stderr, "plan_megatron: no megatron frontier\n");
    return 1;
  }
  printf("megatron frontier: %zu points\n", points);
  return 0;
}
