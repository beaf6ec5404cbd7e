// SPDX-License-Identifier: Apache-2.0
// The pieces of the `_kareus` extension module, one file per part of the library it exposes.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "kareus/core/json.hpp"

namespace kareus::python {

namespace py = pybind11;

void bind_errors(py::module_& m);
void bind_plan(py::module_& m);
void bind_schedule(py::module_& m);
void bind_runtime(py::module_& m);

// A JSON document as Python objects (dict, list, ...), through the json module: pybind11 has no
// nlohmann::json caster and the documents crossing here are small.
py::object to_python(const Json& value);

}  // namespace kareus::python
