#include "materials/formulation.hpp"

namespace edgefem {

TetMaterial TetMaterial::from_young_poisson(double young, double poisson, bool volumetric) {
  TetMaterial m;
  m.lambda = young * poisson / ((1.0 + poisson) * (1.0 - 2.0 * poisson));
  m.mu = young / (2.0 * (1.0 + poisson));
  m.k_vol = young / (4.0 * (1.0 - 2.0 * poisson));
  m.volumetric = volumetric;
  return m;
}

}  // namespace edgefem
