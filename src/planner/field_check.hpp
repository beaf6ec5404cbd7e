// SPDX-License-Identifier: Apache-2.0
// Checks a request's field as its front end spells it: the name the user typed and the value in
// the unit they typed it in (PlanRequest::spellings).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "kareus/core/error.hpp"
#include "kareus/planner/planner.hpp"

namespace kareus::planner {

class FieldCheck {
 public:
  FieldCheck(std::string_view where, const std::map<std::string, FieldSpelling>& spellings)
      : where_(where), spellings_(spellings) {}

  // How the front end spells `field`, and the factor to the unit its user types.
  FieldSpelling spelling(const std::string& field) const {
    const auto it = spellings_.find(field);
    return it != spellings_.end() ? it->second : FieldSpelling{field, 1.0};
  }

  void number(bool ok, const std::string& field, double value, std::string_view allowed) const {
    const FieldSpelling spelt = spelling(field);
    require(ok, where_, spelt.name, format_number(value * spelt.scale), allowed);
  }

  void text(bool ok, const std::string& field, std::string_view value,
            std::string_view allowed) const {
    require(ok, where_, spelling(field).name, value, allowed);
  }

  std::string_view where() const { return where_; }

 private:
  std::string_view where_;
  const std::map<std::string, FieldSpelling>& spellings_;
};

// Refuses a negative milp_nodes, or a positive one for a rule other than a deadline.
void check_selection(const Selection& selection, const FieldCheck& check);

}  // namespace kareus::planner
