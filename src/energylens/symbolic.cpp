// SPDX-License-Identifier: Apache-2.0
#include "kareus/energylens/symbolic.hpp"

#include <LBFGSB.h>
#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "kareus/core/error.hpp"
#include "kareus/core/progress.hpp"
#include "kareus/core/rng.hpp"
#include "kareus/energylens/descriptors.hpp"
#include "kareus/energylens/recovery.hpp"
#include "scaled_loss.hpp"

namespace kareus::energylens {
namespace {

using Op = ExprNode::Op;
constexpr double kInf = std::numeric_limits<double>::infinity();

int arity(Op op) {
  switch (op) {
    case Op::kConstant:
    case Op::kVariable:
      return 0;
    case Op::kLog:
      return 1;
    default:
      return 2;
  }
}

double variable(const Sample& s, Var v) {
  switch (v) {
    case Var::kTp:
      return s.tp;
    case Var::kPp:
      return s.pp;
    case Var::kBatch:
      return s.batch;
    case Var::kInputTokens:
      return s.input_tokens.value_or(1.0);
    case Var::kOutputTokens:
      return s.output_tokens;
    case Var::kParamsB:
    case Var::kActiveParamsB:
    case Var::kKvMbPerToken:
    case Var::kWPerGbps:
      return s.descriptors[static_cast<std::size_t>(v) - static_cast<std::size_t>(Var::kParamsB)];
  }
  return 0.0;
}

// End (one past) of the subtree starting at `pos`.
std::size_t subtree_end(const std::vector<ExprNode>& nodes, std::size_t pos) {
  int open = 1;
  while (open > 0) open += arity(nodes[pos++].op) - 1;
  return pos;
}

// Value and derivatives with respect to the constants (forward mode): dv[j] is d value / d c_j,
// constants numbered in prefix order.
struct Dual {
  double v;
  std::vector<double> d;
};

Dual eval_dual(const std::vector<ExprNode>& nodes, std::size_t& pos, const Sample& s, std::size_t k,
               std::size_t& next_const) {
  const ExprNode& n = nodes[pos++];
  if (n.op == Op::kConstant) {
    Dual r{n.value, std::vector<double>(k, 0.0)};
    r.d[next_const++] = 1.0;
    return r;
  }
  if (n.op == Op::kVariable) return {variable(s, n.var), std::vector<double>(k, 0.0)};
  Dual a = eval_dual(nodes, pos, s, k, next_const);
  if (n.op == Op::kLog) {
    if (!(a.v > 0.0)) return {std::nan(""), a.d};
    for (double& x : a.d) x /= a.v;
    a.v = std::log(a.v);
    return a;
  }
  Dual b = eval_dual(nodes, pos, s, k, next_const);
  Dual r{0.0, std::vector<double>(k)};
  switch (n.op) {
    case Op::kAdd:
      r.v = a.v + b.v;
      for (std::size_t j = 0; j < k; ++j) r.d[j] = a.d[j] + b.d[j];
      break;
    case Op::kSub:
      r.v = a.v - b.v;
      for (std::size_t j = 0; j < k; ++j) r.d[j] = a.d[j] - b.d[j];
      break;
    case Op::kMul:
      r.v = a.v * b.v;
      for (std::size_t j = 0; j < k; ++j) r.d[j] = a.d[j] * b.v + a.v * b.d[j];
      break;
    case Op::kDiv:
      if (std::fabs(b.v) < 1e-12) return {std::nan(""), r.d};
      r.v = a.v / b.v;
      for (std::size_t j = 0; j < k; ++j) r.d[j] = (a.d[j] - r.v * b.d[j]) / b.v;
      break;
    case Op::kPow:
      if (!(a.v > 0.0)) return {std::nan(""), r.d};
      r.v = std::pow(a.v, b.v);
      for (std::size_t j = 0; j < k; ++j)
        r.d[j] = r.v * (b.d[j] * std::log(a.v) + b.v * a.d[j] / a.v);
      break;
    default:
      break;
  }
  return r;
}

double eval_at(const std::vector<ExprNode>& nodes, std::size_t& pos, const Sample& s) {
  const ExprNode& n = nodes[pos++];
  switch (n.op) {
    case Op::kConstant:
      return n.value;
    case Op::kVariable:
      return variable(s, n.var);
    case Op::kLog: {
      const double a = eval_at(nodes, pos, s);
      return a > 0.0 ? std::log(a) : std::nan("");
    }
    default:
      break;
  }
  const double a = eval_at(nodes, pos, s);
  const double b = eval_at(nodes, pos, s);
  switch (n.op) {
    case Op::kAdd:
      return a + b;
    case Op::kSub:
      return a - b;
    case Op::kMul:
      return a * b;
    case Op::kDiv:
      return std::fabs(b) < 1e-12 ? std::nan("") : a / b;
    case Op::kPow:
      return a > 0.0 ? std::pow(a, b) : std::nan("");
    default:
      return std::nan("");
  }
}

std::string print(const std::vector<ExprNode>& nodes, std::size_t& pos) {
  const ExprNode& n = nodes[pos++];
  switch (n.op) {
    case Op::kConstant:
      return fmt::format("{:.4g}", n.value);
    case Op::kVariable:
      return std::string(var_name(n.var));
    case Op::kLog:
      return "log(" + print(nodes, pos) + ")";
    default:
      break;
  }
  const bool a_is_leaf = arity(nodes[pos].op) < 2;
  const std::string a = print(nodes, pos);
  const bool b_is_leaf = arity(nodes[pos].op) < 2;
  const std::string b = print(nodes, pos);
  auto wrap = [](bool leaf, const std::string& t) { return leaf ? t : "(" + t + ")"; };
  switch (n.op) {
    case Op::kAdd:
      return a + " + " + b;
    case Op::kSub:
      return a + " - " + wrap(b_is_leaf, b);
    case Op::kMul:
      return wrap(a_is_leaf, a) + " * " + wrap(b_is_leaf, b);
    case Op::kDiv:
      return wrap(a_is_leaf, a) + " / " + wrap(b_is_leaf, b);
    case Op::kPow:
      return wrap(a_is_leaf, a) + "^" + wrap(b_is_leaf, b);
    default:
      return "?";
  }
}

struct Data {
  const std::vector<Sample>& rows;
  std::vector<double> energy;
  detail::ScaleGroups groups;
  Data(const std::vector<Sample>& r, const std::vector<std::string>& scale_by)
      : rows(r), groups(r, scale_by) {
    for (const Sample& s : r) energy.push_back(s.energy->value());
  }

  double loss(const Expression& e, double* scale) const {
    std::vector<double> f;
    for (const Sample& s : rows) f.push_back(e.evaluate(s));
    std::vector<double> scales;
    const double l =
        detail::scaled_loss(f, energy, groups, nullptr, 0, nullptr, scale ? &scales : nullptr);
    if (scale && std::isfinite(l)) {
      double m = 0.0;
      for (double x : scales) m += std::log(x);
      *scale = std::exp(m / static_cast<double>(scales.size()));
    }
    return l;
  }
};

// L-BFGS-B over the expression's constants (bounded only to keep pow and exp finite).
void refit_constants(Expression& e, const Data& data, int iterations) {
  std::vector<std::size_t> where;
  for (std::size_t i = 0; i < e.nodes.size(); ++i)
    if (e.nodes[i].op == Op::kConstant) where.push_back(i);
  const std::size_t k = where.size();
  if (k == 0) return;
  auto objective = [&](const Eigen::VectorXd& c, Eigen::VectorXd& grad) {
    Expression t = e;
    for (std::size_t j = 0; j < k; ++j) t.nodes[where[j]].value = c(static_cast<Eigen::Index>(j));
    std::vector<double> f, df;
    for (const Sample& s : data.rows) {
      std::size_t pos = 0, next = 0;
      const Dual d = eval_dual(t.nodes, pos, s, k, next);
      f.push_back(d.v);
      df.insert(df.end(), d.d.begin(), d.d.end());
    }
    std::vector<double> g;
    const double l = detail::scaled_loss(f, data.energy, data.groups, &df, k, &g, nullptr);
    for (std::size_t j = 0; j < k; ++j)
      grad(static_cast<Eigen::Index>(j)) = std::isfinite(l) && g.size() == k ? g[j] : 0.0;
    return std::isfinite(l) ? l : std::numeric_limits<double>::max();
  };
  Eigen::VectorXd c(static_cast<Eigen::Index>(k));
  for (std::size_t j = 0; j < k; ++j) c(static_cast<Eigen::Index>(j)) = e.nodes[where[j]].value;
  const Eigen::VectorXd lb = Eigen::VectorXd::Constant(static_cast<Eigen::Index>(k), -1e4);
  const Eigen::VectorXd ub = Eigen::VectorXd::Constant(static_cast<Eigen::Index>(k), 1e4);
  c = c.cwiseMax(lb).cwiseMin(ub);
  LBFGSpp::LBFGSBParam<double> param;
  param.max_iterations = iterations;
  param.max_linesearch = 40;
  LBFGSpp::LBFGSBSolver<double> solver(param);
  double fx = 0.0;
  const double before = data.loss(e, nullptr);
  Expression candidate = e;
  try {
    solver.minimize(objective, c, fx, lb, ub);
  } catch (const std::exception&) {
    // The line search gave up (flat or undefined region); the last iterate may still improve.
  }
  for (std::size_t j = 0; j < k; ++j)
    candidate.nodes[where[j]].value = c(static_cast<Eigen::Index>(j));
  if (data.loss(candidate, nullptr) < before) e = std::move(candidate);
}

class Generator {
 public:
  Generator(Rng& rng, std::vector<Var> vars) : rng_(rng), vars_(std::move(vars)) {}

  ExprNode leaf() {
    if (rng_.uniform() < 0.3) return {Op::kConstant, rng_.uniform(-2.0, 2.0), Var::kTp};
    return {Op::kVariable, 0.0,
            vars_[static_cast<std::size_t>(rng_.integer(0, long(vars_.size()) - 1))]};
  }
  ExprNode function() {
    static constexpr Op ops[] = {Op::kAdd, Op::kSub, Op::kMul, Op::kDiv, Op::kPow, Op::kLog};
    return {ops[rng_.integer(0, 5)], 0.0, Var::kTp};
  }
  void grow(std::vector<ExprNode>& out, int depth, bool full) {
    if (depth == 0 || (!full && rng_.uniform() < 0.3)) {
      out.push_back(leaf());
      return;
    }
    const ExprNode f = function();
    out.push_back(f);
    for (int i = 0; i < arity(f.op); ++i) grow(out, depth - 1, full);
  }
  Expression random(int depth) {
    Expression e;
    grow(e.nodes, depth, rng_.uniform() < 0.5);
    return e;
  }

 private:
  Rng& rng_;
  std::vector<Var> vars_;
};

struct Individual {
  Expression e;
  double loss = kInf;
  double fitness = kInf;
};

}  // namespace

std::string_view var_name(Var v) {
  switch (v) {
    case Var::kTp:
      return "tp";
    case Var::kPp:
      return "pp";
    case Var::kBatch:
      return "batch";
    case Var::kInputTokens:
      return "input_tokens";
    case Var::kOutputTokens:
      return "output_tokens";
    case Var::kParamsB:
      return "params_b";
    case Var::kActiveParamsB:
      return "active_params_b";
    case Var::kKvMbPerToken:
      return "kv_mb_per_token";
    case Var::kWPerGbps:
      return "w_per_gbps";
  }
  return "?";
}

double Expression::evaluate(const Sample& s) const {
  std::size_t pos = 0;
  return eval_at(nodes, pos, s);
}

std::string Expression::to_string() const {
  std::size_t pos = 0;
  return print(nodes, pos);
}

double expression_loss(const Expression& e, const std::vector<Sample>& rows,
                       const std::vector<std::string>& scale_by, double* scale) {
  return Data(rows, scale_by).loss(e, scale);
}

DiscoverResult discover(const Dataset& dataset, const DiscoverOptions& options) {
  if (options.population < 10)
    throw Error::invalid("", field_ref("population"), std::to_string(options.population),
                         "must be >= 10");
  if (options.generations < 1)
    throw Error::invalid("", field_ref("generations"), std::to_string(options.generations),
                         "must be >= 1");
  if (options.islands < 1)
    throw Error::invalid("", field_ref("islands"), std::to_string(options.islands), "must be >= 1");
  if (!(options.parsimony >= 0.0) || !std::isfinite(options.parsimony))
    throw Error::invalid("", field_ref("parsimony"), fmt::format("{}", options.parsimony),
                         "a finite number >= 0");
  if (options.max_complexity < 3)
    throw Error::invalid("", field_ref("max_complexity"), std::to_string(options.max_complexity),
                         "must be >= 3");
  Dataset described = dataset;
  if (options.descriptors) attach_descriptors(described);
  DiscoverResult result;
  for (Var v : {Var::kTp, Var::kPp, Var::kBatch, Var::kInputTokens, Var::kOutputTokens,
                Var::kParamsB, Var::kActiveParamsB, Var::kKvMbPerToken, Var::kWPerGbps}) {
    if (v == Var::kInputTokens && !dataset.has_input_tokens) continue;
    if (v >= Var::kParamsB && !options.descriptors) continue;
    // A variable constant over the data carries no information; leave it out of the search.
    const double first = variable(described.samples.front(), v);
    if (std::any_of(described.samples.begin(), described.samples.end(),
                    [&](const Sample& s) { return variable(s, v) != first; }))
      result.variables.push_back(v);
  }
  if (result.variables.empty())
    throw Error(
        fmt::format("{}: no variable changes between rows; nothing to discover", dataset.source));
  const Data data(described.samples, options.scale_by);
  Rng rng(options.seed);
  Generator gen(rng, result.variables);
  std::map<std::size_t, Individual> archive;  // best per complexity, over all generations

  auto score = [&](Individual& ind) {
    ind.loss = ind.e.complexity() <= options.max_complexity ? data.loss(ind.e, nullptr) : kInf;
    ind.fitness = ind.loss + options.parsimony * static_cast<double>(ind.e.complexity());
    auto& best = archive[ind.e.complexity()];
    if (ind.loss < best.loss) best = ind;
  };

  std::vector<Individual> pop;
  auto tournament = [&]() -> const Individual& {
    const Individual* best = nullptr;
    for (int t = 0; t < 5; ++t) {
      const Individual& c = pop[static_cast<std::size_t>(rng.integer(0, long(pop.size()) - 1))];
      if (!best || c.fitness < best->fitness) best = &c;
    }
    return *best;
  };
  auto random_point = [&](const Expression& e) {
    return static_cast<std::size_t>(rng.integer(0, long(e.nodes.size()) - 1));
  };

  // Independent populations (islands) sharing one archive: a single GP run often stalls in a
  // local structure, and restarting is cheaper than tuning diversity operators.
  Progress progress("energylens discover",
                    static_cast<std::size_t>(options.generations * options.islands),
                    options.progress);
  for (int island = 0; island < options.islands; ++island) {
    pop.assign(options.population, Individual{});
    for (std::size_t i = 0; i < pop.size(); ++i) {
      pop[i].e = gen.random(2 + static_cast<int>(i % 3));
      score(pop[i]);
    }
    for (int g = 0; g < options.generations; ++g) {
      std::sort(pop.begin(), pop.end(),
                [](const Individual& a, const Individual& b) { return a.fitness < b.fitness; });
      // Structure search alone tunes constants poorly; polish the leaders' constants each
      // generation so that good shapes are not lost to bad coefficients.
      for (std::size_t i = 0; i < std::min<std::size_t>(5, pop.size()); ++i) {
        refit_constants(pop[i].e, data, 30);
        score(pop[i]);
      }
      std::vector<Individual> next(pop.begin(), pop.begin() + 2);  // elitism
      while (next.size() < pop.size()) {
        Individual child;
        child.e = tournament().e;
        const double r = rng.uniform();
        const std::size_t at = random_point(child.e);
        const std::size_t end = subtree_end(child.e.nodes, at);
        std::vector<ExprNode> insert;
        if (r < 0.7) {
          const Expression& donor = tournament().e;
          const std::size_t from = random_point(donor);
          insert.assign(donor.nodes.begin() + long(from),
                        donor.nodes.begin() + long(subtree_end(donor.nodes, from)));
        } else if (r < 0.85) {
          insert = gen.random(static_cast<int>(rng.integer(1, 3))).nodes;
        } else {
          ExprNode n = child.e.nodes[at];
          if (n.op == Op::kConstant)
            n.value *= rng.normal(1.0, 0.3);
          else if (arity(n.op) == 0)
            n = gen.leaf();
          else if (arity(n.op) == 2)
            do n.op = gen.function().op;
            while (arity(n.op) != 2);
          child.e.nodes[at] = n;
        }
        if (!insert.empty()) {
          std::vector<ExprNode> nodes(child.e.nodes.begin(), child.e.nodes.begin() + long(at));
          nodes.insert(nodes.end(), insert.begin(), insert.end());
          nodes.insert(nodes.end(), child.e.nodes.begin() + long(end), child.e.nodes.end());
          if (nodes.size() <= options.max_complexity) child.e.nodes = std::move(nodes);
        }
        score(child);
        next.push_back(std::move(child));
      }
      pop = std::move(next);
      progress.update(static_cast<std::size_t>(island * options.generations + g + 1));
    }
  }
  progress.finish();

  double best_loss = kInf;
  for (auto& [complexity, ind] : archive) {
    if (!std::isfinite(ind.loss)) continue;
    refit_constants(ind.e, data, 200);
    FrontMember m;
    m.expression = ind.e;
    m.loss = data.loss(ind.e, &m.scale);
    m.complexity = complexity;
    // A larger tree enters the front only when it lowers the loss noticeably.
    if (m.loss < best_loss * (1.0 - 1e-6)) {
      best_loss = m.loss;
      result.front.push_back(std::move(m));
    }
  }
  result.recovery = compare_with_closed_form(described, result, options);
  return result;
}

}  // namespace kareus::energylens
