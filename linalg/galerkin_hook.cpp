// SPDX-License-Identifier: BSD-3-Clause
// The hook of our Galerkin products into PETSc's MatPtAP (galerkin.hpp: use_own_galerkin_products), apart from the
// products themselves (galerkin.cpp) because it relies on PETSc's internal conventions: compiled for the PETSc
// versions it was written against only (EDGEFEM_OWN_GALERKIN_HOOK).
#include <exception>
#include <memory>
#include <string>

#include "linalg/galerkin.hpp"

namespace edgefem {
namespace {

constexpr char kProductKey[] = "edgefem_galerkin_product";

}  // namespace

#if EDGEFEM_OWN_GALERKIN_HOOK
namespace {

using ProductSetFromOptions = PetscErrorCode (*)(Mat);
// PETSc's own productsetfromoptions of SeqAIJ and MPIAIJ matrices (what a marked matrix had before).
ProductSetFromOptions petsc_seqaij = nullptr, petsc_mpiaij = nullptr;

ProductSetFromOptions& petsc_set_from_options(Mat m) { return has_type(m, {MATSEQAIJ}) ? petsc_seqaij : petsc_mpiaij; }

/// A PETSc callback's body: an exception becomes a PETSc error (it must not cross PETSc's C frames).
template <class Body>
PetscErrorCode as_petsc_callback(Mat m, const char* function, Body&& body) noexcept {
  try {
    body();
    return 0;
  } catch (const std::exception& e) {
    return PetscError(PetscObjectComm(reinterpret_cast<PetscObject>(m)), __LINE__, function, __FILE__, PETSC_ERR_LIB,
                      PETSC_ERROR_INITIAL, "%s", e.what());
  }
}

PetscErrorCode destroy_product(void* product) {
  delete static_cast<GalerkinProduct*>(product);
  return 0;
}

template <class F>
void (*as_operation(F f))(void) {
  return reinterpret_cast<void (*)(void)>(f);
}

}  // namespace

PetscErrorCode GalerkinProduct::set_from_options(Mat product) {
  return as_petsc_callback(product, "GalerkinProduct::set_from_options", [&] {
    MatProductType type = MATPRODUCT_UNSPECIFIED;
    Mat a = nullptr, b = nullptr;
    EDGEFEM_PETSC(MatProductGetType(product, &type));
    EDGEFEM_PETSC(MatProductGetMats(product, &a, &b, nullptr));
    void (*a_operation)(void) = nullptr;
    EDGEFEM_PETSC(MatGetOperation(a, MATOP_PRODUCTSETFROMOPTIONS, &a_operation));
    if (type == MATPRODUCT_PtAP && a_operation == as_operation(&GalerkinProduct::set_from_options)) {
      EDGEFEM_PETSC(MatSetOperation(product, MATOP_PRODUCTSYMBOLIC, as_operation(&GalerkinProduct::symbolic)));
      return;
    }
    if (const ProductSetFromOptions petsc = petsc_set_from_options(a)) EDGEFEM_PETSC(petsc(product));
  });
}

PetscErrorCode GalerkinProduct::symbolic(Mat product) {
  return as_petsc_callback(product, "GalerkinProduct::symbolic", [&] {
    Mat a = nullptr, p = nullptr;
    EDGEFEM_PETSC(MatProductGetMats(product, &a, &p, nullptr));
    std::unique_ptr<GalerkinProduct> g = structure(a, p, 0);
    if (!g) {  // not whole blocks on some rank (every rank knows): PETSc's product
      EDGEFEM_PETSC(petsc_set_from_options(a)(product));
      void (*petsc_symbolic)(void) = nullptr;
      EDGEFEM_PETSC(MatGetOperation(product, MATOP_PRODUCTSYMBOLIC, &petsc_symbolic));
      if (!petsc_symbolic || petsc_symbolic == as_operation(&GalerkinProduct::symbolic))
        throw PetscFailure("GalerkinProduct: PETSc offers no P^T A P for these matrices");
      EDGEFEM_PETSC(reinterpret_cast<PetscErrorCode (*)(Mat)>(petsc_symbolic)(product));
      return;
    }
    g->make_coarse(product);
    MPI_Comm comm = MPI_COMM_NULL;
    EDGEFEM_PETSC(PetscObjectGetComm(reinterpret_cast<PetscObject>(product), &comm));
    PetscContainer container = nullptr;
    EDGEFEM_PETSC(PetscContainerCreate(comm, &container));
    EDGEFEM_PETSC(PetscContainerSetPointer(container, g.get()));
    EDGEFEM_PETSC(PetscContainerSetUserDestroy(container, destroy_product));
    g.release();  // the container's now
    EDGEFEM_PETSC(PetscObjectCompose(reinterpret_cast<PetscObject>(product), kProductKey,
                                     reinterpret_cast<PetscObject>(container)));
    EDGEFEM_PETSC(PetscContainerDestroy(&container));
    EDGEFEM_PETSC(MatSetOperation(product, MATOP_PRODUCTNUMERIC, as_operation(&GalerkinProduct::numeric)));
    use_own_galerkin_products(product);  // the next level's product
  });
}

PetscErrorCode GalerkinProduct::numeric(Mat product) {
  return as_petsc_callback(product, "GalerkinProduct::numeric", [&] {
    GalerkinProduct* g = galerkin_product_of(product);
    if (!g) throw PetscFailure("GalerkinProduct: a product matrix without its GalerkinProduct");
    g->update();
  });
}

bool use_own_galerkin_products(Mat fine) {
  if (!is_aij(fine)) return false;
  const auto own = as_operation(&GalerkinProduct::set_from_options);
  void (*current)(void) = nullptr;
  EDGEFEM_PETSC(MatGetOperation(fine, MATOP_PRODUCTSETFROMOPTIONS, &current));
  if (current == own) return true;
  ProductSetFromOptions& petsc = petsc_set_from_options(fine);
  if (!petsc) petsc = reinterpret_cast<ProductSetFromOptions>(current);
  // A matrix whose productsetfromoptions differs from its partner's is asked for this function by name.
  MatType type = nullptr;
  EDGEFEM_PETSC(MatGetType(fine, &type));
  const std::string name = std::string("MatProductSetFromOptions_") + type + "_" + type + "_C";
  EDGEFEM_PETSC(MatSetOperation(fine, MATOP_PRODUCTSETFROMOPTIONS, own));
  EDGEFEM_PETSC(PetscObjectComposeFunction(reinterpret_cast<PetscObject>(fine), name.c_str(),
                                           &GalerkinProduct::set_from_options));
  return true;
}

void use_petsc_galerkin_products(Mat fine) {
  if (!is_aij(fine)) return;
  void (*current)(void) = nullptr;
  EDGEFEM_PETSC(MatGetOperation(fine, MATOP_PRODUCTSETFROMOPTIONS, &current));
  if (current != as_operation(&GalerkinProduct::set_from_options)) return;  // not marked
  MatType type = nullptr;
  EDGEFEM_PETSC(MatGetType(fine, &type));
  const std::string name = std::string("MatProductSetFromOptions_") + type + "_" + type + "_C";
  EDGEFEM_PETSC(MatSetOperation(fine, MATOP_PRODUCTSETFROMOPTIONS, as_operation(petsc_set_from_options(fine))));
  EDGEFEM_PETSC(PetscObjectComposeFunction(reinterpret_cast<PetscObject>(fine), name.c_str(), nullptr));
}
#else
bool use_own_galerkin_products(Mat) { return false; }  // GAMG's first set-up keeps PETSc's MatPtAP
void use_petsc_galerkin_products(Mat) {}
#endif  // EDGEFEM_OWN_GALERKIN_HOOK

GalerkinProduct* galerkin_product_of(Mat coarse) {
  PetscObject container = nullptr;
  EDGEFEM_PETSC(PetscObjectQuery(reinterpret_cast<PetscObject>(coarse), kProductKey, &container));
  if (!container) return nullptr;
  void* product = nullptr;
  EDGEFEM_PETSC(PetscContainerGetPointer(reinterpret_cast<PetscContainer>(container), &product));
  return static_cast<GalerkinProduct*>(product);
}

}  // namespace edgefem
