#include "bindings.hpp"

#include "kareus/nvml/nvml.hpp"

namespace kareus::python {
namespace {

// Plain handles (no reference counting at exit): the module attributes keep the types alive for
// as long as the interpreter runs.
py::handle error_type;
py::handle nvml_error_type;

}  // namespace

py::object to_python(const Json& value) {
  return py::module_::import("json").attr("loads")(value.dump());
}

void bind_errors(py::module_& m) {
  // kareus::Error carries a message a user can act on; Python sees kareus.Error, and NVML
  // failures as its subclass kareus.NvmlError with NVML's return code in `.code`.
  error_type = py::exception<Error>(m, "Error").release();
  nvml_error_type = py::exception<nvml::NvmlError>(m, "NvmlError", error_type).release();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const nvml::NvmlError& e) {
      py::object instance = nvml_error_type(e.what());
      instance.attr("code") = e.code();
      PyErr_SetObject(nvml_error_type.ptr(), instance.ptr());
    } catch (const Error& e) {
      PyErr_SetString(error_type.ptr(), e.what());
    }
  });
}

}  // namespace kareus::python

PYBIND11_MODULE(_kareus, m) {
  m.doc() = "Kareus: energy-optimal GPU execution plans for large-model training";
  kareus::python::bind_errors(m);
  kareus::python::bind_plan(m);
  kareus::python::bind_schedule(m);
  kareus::python::bind_runtime(m);
}
