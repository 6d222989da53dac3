// SPDX-License-Identifier: MIT
#include "ui/categorycolors.h"

#include <array>

namespace memledger::ui {

namespace {

// Okabe & Ito (2008), "Color Universal Design"; grey for the runtime reserve.
constexpr std::array<QRgb, kCategoryCount> kPalette = {
    0xff0072b2, // weights: blue
    0xffe69f00, // gradients: orange
    0xff009e73, // optimizer_states: bluish green
    0xffd55e00, // activations: vermillion
    0xffcc79a7, // communication: reddish purple
    0xff8c8c8c, // runtime: grey
};

// Yellow is the Okabe–Ito hue no training category uses; on a dark window a
// deeper gold, so it does not glare beside the other fills.
constexpr QRgb kKvCacheLight = 0xfff0e442;
constexpr QRgb kKvCacheDark = 0xffd8c21a;

constexpr double kHostLightening = 0.55; // share of white blended in for host rows

} // namespace

QColor categoryColor(Category category)
{
    const auto index = static_cast<std::size_t>(category);
    return index < kPalette.size() ? QColor::fromRgb(kPalette[index]) : QColor(Qt::black);
}

QColor categoryColor(Category category, Placement placement)
{
    const QColor base = categoryColor(category);
    if (placement == Placement::Device)
        return base;
    const auto lighten = [](int channel) { return channel + static_cast<int>((255 - channel) * kHostLightening); };
    return QColor(lighten(base.red()), lighten(base.green()), lighten(base.blue()));
}

QColor kvCacheColor(bool dark)
{
    return QColor::fromRgb(dark ? kKvCacheDark : kKvCacheLight);
}

QColor inferenceCategoryColor(InferenceCategory category, bool dark)
{
    switch (category) {
    case InferenceCategory::Weights:
        return categoryColor(Category::Weights);
    case InferenceCategory::KvCache:
        return kvCacheColor(dark);
    case InferenceCategory::Activations:
        return categoryColor(Category::Activations);
    case InferenceCategory::Runtime:
        return categoryColor(Category::Runtime);
    }
    return QColor(Qt::black);
}

} // namespace memledger::ui
