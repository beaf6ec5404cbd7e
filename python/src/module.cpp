// SPDX-License-Identifier: Apache-2.0
#include "bindings.hpp"

#include <string>
#include <string_view>

#include "kareus/nvml/nvml.hpp"
#include "kareus/version.hpp"

namespace kareus::python {
namespace {

// Plain handles (no reference counting at exit): the module attributes keep the types alive for
// as long as the interpreter runs.
py::handle error_type;
py::handle io_error_type;
py::handle device_error_type;
py::handle nvml_error_type;

py::handle type_of(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kIo:
      return io_error_type;
    case ErrorKind::kDevice:
      return device_error_type;
    case ErrorKind::kInvalidInput:
    case ErrorKind::kInternal:
      break;
  }
  return error_type;
}

// The keyword of a library field that Python names otherwise; the others are the keywords.
std::string keyword_of(std::string_view field) {
  if (field == "store_path") return "store";
  return std::string(field);
}

void raise(py::handle type, const Error& e) {
  py::object instance = type(e.message(keyword_of));
  instance.attr("kind") = std::string(to_string(e.kind()));
  PyErr_SetObject(type.ptr(), instance.ptr());
}

}  // namespace

py::object to_python(const Json& value) {
  return py::module_::import("json").attr("loads")(value.dump());
}

void bind_errors(py::module_& m) {
  // kareus::Error carries a message a user can act on; Python sees kareus.Error with the kind in
  // `.kind`, I/O failures (files, the store, kareusd's socket) as its subclass kareus.IoError,
  // device failures (kareusd refusals, CUDA) as kareus.DeviceError, and NVML failures as
  // DeviceError's subclass kareus.NvmlError with NVML's return code in `.code`.
  error_type = py::exception<Error>(m, "Error").release();
  io_error_type = py::exception<Error>(m, "IoError", error_type).release();
  device_error_type = py::exception<Error>(m, "DeviceError", error_type).release();
  nvml_error_type = py::exception<nvml::NvmlError>(m, "NvmlError", device_error_type).release();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const nvml::NvmlError& e) {
      py::object instance = nvml_error_type(e.what());
      instance.attr("code") = e.code();
      instance.attr("kind") = std::string(to_string(e.kind()));
      PyErr_SetObject(nvml_error_type.ptr(), instance.ptr());
    } catch (const Error& e) {
      raise(type_of(e.kind()), e);
    }
  });
}

}  // namespace kareus::python

PYBIND11_MODULE(_kareus, m) {
  m.doc() = "Kareus: energy-optimal GPU execution plans for large-model training";
  // The version kareus --version prints: one version, from the top-level CMakeLists.txt.
  m.attr("__version__") = kareus::kVersion;
  kareus::python::bind_errors(m);
  kareus::python::bind_plan(m);
  kareus::python::bind_schedule(m);
  kareus::python::bind_runtime(m);
}
