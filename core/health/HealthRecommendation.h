#pragma once
// What to do with a GPU, from its flags, counters, recovery action and decoded events, following
// the actions NVIDIA publishes (Xid catalogue buckets, memory error management and RMA policy):
//   rma_candidate  row-remapping failure, SRAM threshold exceeded, Xid 64 (remapping failure)
//   drain          Xid 79 (fallen off the bus: drain the node, cold boot, investigate), Xid 48 with
//                  63/64 (drain and reset), recovery action "Node Reboot"/"Drain P2P"/"Drain and
//                  Reset" (from nvidia-smi or Xid 154), buckets RESTART_BM/RESTART_VM
//   reset          pending row remap or page retirement, recovery action "GPU Reset", buckets
//                  RESET_GPU and the NVLink workflows, uncorrected volatile ECC errors
//   monitor        unknown Xids, CONTACT_SUPPORT buckets, uncorrectable errors that the memory
//                  already repaired (remapped rows), Xid 92
//   none           application and informational Xids
// docs/formats.md lists the rules with their sources.
#include "HealthReport.h"

namespace faultline {

class XidCatalog;

// Fills record.recommendation and record.reasons (most severe first).
void recommendHealth(GpuHealthRecord& record, const XidCatalog& catalog);

// The action NVIDIA's immediate-action bucket asks for, in Faultline's terms.
HealthAction actionForBucket(const std::string& bucket);

}  // namespace faultline
