// SPDX-License-Identifier: Apache-2.0
// Strong unit types. Time, energy, power and clock never cross a module boundary as a bare
// double, so a seconds-for-milliseconds or watts-for-joules mix-up fails to compile.
#pragma once

#include <cmath>
#include <compare>

namespace kareus {

template <class Tag>
class Quantity {
 public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double value) : value_(value) {}
  constexpr double value() const { return value_; }

  constexpr Quantity operator+(Quantity o) const { return Quantity(value_ + o.value_); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(value_ - o.value_); }
  constexpr Quantity operator-() const { return Quantity(-value_); }
  constexpr Quantity operator*(double k) const { return Quantity(value_ * k); }
  constexpr Quantity operator/(double k) const { return Quantity(value_ / k); }
  constexpr double operator/(Quantity o) const { return value_ / o.value_; }
  constexpr Quantity& operator+=(Quantity o) {
    value_ += o.value_;
    return *this;
  }
  constexpr Quantity& operator-=(Quantity o) {
    value_ -= o.value_;
    return *this;
  }
  constexpr Quantity& operator*=(double k) {
    value_ *= k;
    return *this;
  }
  constexpr auto operator<=>(const Quantity&) const = default;

 private:
  double value_ = 0.0;
};

template <class Tag>
constexpr Quantity<Tag> operator*(double k, Quantity<Tag> q) {
  return q * k;
}

struct SecondsTag {};
struct JoulesTag {};
struct WattsTag {};
struct MHzTag {};

using Seconds = Quantity<SecondsTag>;
using Joules = Quantity<JoulesTag>;
using Watts = Quantity<WattsTag>;
using MHz = Quantity<MHzTag>;

constexpr Joules operator*(Watts p, Seconds t) { return Joules(p.value() * t.value()); }
constexpr Joules operator*(Seconds t, Watts p) { return p * t; }
constexpr Watts operator/(Joules e, Seconds t) { return Watts(e.value() / t.value()); }
constexpr Seconds operator/(Joules e, Watts p) { return Seconds(e.value() / p.value()); }

constexpr Seconds milliseconds(double ms) { return Seconds(ms * 1e-3); }
constexpr Seconds microseconds(double us) { return Seconds(us * 1e-6); }
constexpr double to_milliseconds(Seconds t) { return t.value() * 1e3; }
constexpr double to_hours(Seconds t) { return t.value() / 3600.0; }

}  // namespace kareus
