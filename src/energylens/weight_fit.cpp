#include "kareus/energylens/weight_fit.hpp"

#include "kareus/core/error.hpp"
#include "kareus/energylens/descriptors.hpp"
#include "kareus/workload/memory.hpp"

namespace kareus::energylens {

std::optional<WeightFit> weight_fit(const Sample& s) {
  if (s.model.empty() || s.gpu.empty()) return std::nullopt;
  ModelDescriptors m;
  GpuDescriptors g;
  // A model fitted without descriptors takes candidates the catalogues need not know.
  try {
    m = model_descriptors(s.model);
    g = gpu_descriptors(s.gpu);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kInvalidInput) throw;
    return std::nullopt;
  }
  return WeightFit{kWeightBytes * m.parameters / (s.tp * s.pp) / workload::kBytesPerGib,
                   kUsableMemoryFraction * g.memory_capacity_gib};
}

bool does_not_fit(const Sample& s) {
  const auto fit = weight_fit(s);
  return fit && !fit->fits();
}

}  // namespace kareus::energylens
