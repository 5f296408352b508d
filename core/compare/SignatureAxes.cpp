#include "SignatureAxes.h"

#include <array>

namespace faultline {
namespace {

constexpr std::array<std::string_view, 13> kKindNames = {
    "identical",      "rounding",   "single_bit_random", "stuck_bit",     "sign_flip",  "exponent", "nan_inf",
    "tile_clustered", "row_stripe", "column_stripe",     "address_range", "widespread", "scattered"};

constexpr std::array<std::string_view, 9> kWhatNames = {
    "none", "rounding", "nan_inf", "sign", "exponent", "stuck_bit", "fixed_bit", "random_bit", "multi_bit"};

constexpr std::array<std::string_view, 9> kWhereNames = {"none",       "element",       "tile",
                                                         "row_stripe", "column_stripe", "address_range",
                                                         "periodic",   "scattered",     "widespread"};

template <class Enum, size_t N>
std::optional<Enum> parseName(const std::array<std::string_view, N>& names, std::string_view name)
{
    for (size_t i = 0; i < N; ++i)
        if (names[i] == name) return Enum(i);
    return std::nullopt;
}

template <size_t N>
std::string_view nameAt(const std::array<std::string_view, N>& names, size_t i)
{
    return i < N ? names[i] : std::string_view("unknown");
}

}  // namespace

std::string_view signatureKindName(SignatureKind k)
{
    return nameAt(kKindNames, size_t(k));
}

std::optional<SignatureKind> parseSignatureKind(std::string_view name)
{
    return parseName<SignatureKind>(kKindNames, name);
}

std::string_view signatureWhatName(SignatureWhat w)
{
    return nameAt(kWhatNames, size_t(w));
}

std::optional<SignatureWhat> parseSignatureWhat(std::string_view name)
{
    return parseName<SignatureWhat>(kWhatNames, name);
}

std::string_view signatureWhereName(SignatureWhere w)
{
    return nameAt(kWhereNames, size_t(w));
}

std::optional<SignatureWhere> parseSignatureWhere(std::string_view name)
{
    return parseName<SignatureWhere>(kWhereNames, name);
}

SignatureKind signatureKindFor(SignatureWhat what, SignatureWhere where)
{
    switch (what) {
        case SignatureWhat::None:
            return SignatureKind::Identical;
        case SignatureWhat::Rounding:
            return SignatureKind::Rounding;
        case SignatureWhat::NanInf:
            return SignatureKind::NanInf;
        case SignatureWhat::StuckBit:
            return SignatureKind::StuckBit;
        default:
            break;
    }
    switch (where) {
        case SignatureWhere::Tile:
            return SignatureKind::TileClustered;
        case SignatureWhere::RowStripe:
            return SignatureKind::RowStripe;
        case SignatureWhere::ColumnStripe:
            return SignatureKind::ColumnStripe;
        case SignatureWhere::AddressRange:
        case SignatureWhere::Periodic:
            return SignatureKind::AddressRange;
        default:
            break;
    }
    switch (what) {
        case SignatureWhat::Sign:
            return SignatureKind::SignFlip;
        case SignatureWhat::Exponent:
            return SignatureKind::Exponent;
        case SignatureWhat::FixedBit:
        case SignatureWhat::RandomBit:
            return SignatureKind::SingleBitRandom;
        default:
            return where == SignatureWhere::Widespread ? SignatureKind::Widespread : SignatureKind::Scattered;
    }
}

}  // namespace faultline
