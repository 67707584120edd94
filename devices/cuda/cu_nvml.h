/* cu_nvml.h: the part of NVML polygpu reads — a GPU's power, its energy counter and its default
 * power limit — declared here (values from NVML's documented ABI) so the library builds without
 * NVML's headers, and loaded with dlopen (libnvidia-ml.so.1, installed with the NVIDIA driver),
 * as the CUDA driver is (cu_driver.c). Only reads: nothing here sets a power limit or a clock.
 * A machine without NVML loses only these figures: every function here then says "unknown". */
#ifndef PG_CU_NVML_H
#define PG_CU_NVML_H

#include <stddef.h>
#include <stdint.h>

typedef struct pg__nvml_gpu pg__nvml_gpu; /* an nvmlDevice_t, owned by NVML */

/* The NVML device of a CUDA device, found by its UUID ("GPU-..." as cuDeviceGetUuid gives it,
 * formatted by the backend) or else by its PCI bus id ("0000:65:00.0"); NULL when NVML is
 * absent, fails to start, or knows neither (why, when not NULL, gets the reason for the log).
 * NVML is loaded and initialised once per process, on first use, and never shut down (other
 * runtimes may still read it; the process's exit releases it). */
pg__nvml_gpu *pg__nvml_find(const char *uuid, const char *pci_bus_id, char *why, size_t cap);

/* Each returns 1 with the figure, or 0 when NVML cannot give it for this GPU (not supported on
 * it, no permission, GPU lost). None sets an error message. */
int pg__nvml_power_mw(pg__nvml_gpu *g, unsigned *mw); /* nvmlDeviceGetPowerUsage: drawn now */
/* nvmlDeviceGetTotalEnergyConsumption: since the driver was loaded (Volta and later) */
int pg__nvml_energy_mj(pg__nvml_gpu *g, uint64_t *mj);
/* nvmlDeviceGetPowerManagementDefaultLimit: the board's default power limit */
int pg__nvml_default_limit_mw(pg__nvml_gpu *g, unsigned *mw);

#endif
