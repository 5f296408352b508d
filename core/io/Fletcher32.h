#pragma once
// HDF5's fletcher32 filter, undone: the checksum HDF5 appends to each chunk (H5Z_FILTER_FLETCHER32)
// computed the way HDF5 computes it, so that the chunk reader verifies chunks itself.
#include <cstddef>
#include <cstdint>

namespace faultline::hdf5 {

// Fletcher's checksum over 16-bit big-endian words with both sums starting at 0, as HDF5 defines
// it (an odd last byte counts as the high byte of a word).
uint32_t fletcher32(const unsigned char* data, size_t bytes);

// True when the last four bytes of [data, data + bytes) are the checksum of the bytes before
// them, stored little-endian as HDF5 writes it, or with the bytes of each 16-bit half swapped
// as HDF5 before 1.6.3 wrote it on little-endian hosts (HDF5 accepts both).
bool fletcher32Matches(const unsigned char* data, size_t bytes);

}  // namespace faultline::hdf5
