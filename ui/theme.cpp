// SPDX-License-Identifier: MIT
#include "ui/theme.h"

#include <QApplication>
#include <QPalette>
#include <QStyle>
#include <QStyleFactory>
#include <QToolTip>

#include "ui/paint/rasterthreadpool.h"

#include <algorithm>
#include <cmath>

namespace memledger::ui {

void applyPalette(bool dark)
{
    // Fusion, its scroll bars drawn in strips (ui/paint/rasterthreadpool.h).
    QApplication::setStyle(new StripStyle(QStyleFactory::create(QStringLiteral("Fusion"))));
    if (!dark) {
        QApplication::setPalette(QApplication::style()->standardPalette());
        QToolTip::setPalette(QApplication::palette()); // tooltips keep a palette of their own
        return;
    }
    QPalette p;
    const QColor window(0x2b, 0x2b, 0x2b), base(0x1e, 0x1e, 0x1e), text(0xe8, 0xe8, 0xe8);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0x26, 0x26, 0x26));
    p.setColor(QPalette::ToolTipBase, QColor(0x3a, 0x3a, 0x3a));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, errorColor(true));
    p.setColor(QPalette::Highlight, QColor(0x2f, 0x6f, 0xb3));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(0x6a, 0xb0, 0xff));
    p.setColor(QPalette::PlaceholderText, QColor(0x90, 0x90, 0x90));
    // The bevel shades of a dark palette. Fusion etches disabled menu text with
    // Light one pixel down and right: the light palette's white would make a
    // disabled Undo look brighter than an enabled one, so that etch is drawn in
    // the window's own color.
    p.setColor(QPalette::Light, QColor(0x4a, 0x4a, 0x4a));
    p.setColor(QPalette::Midlight, QColor(0x3a, 0x3a, 0x3a));
    p.setColor(QPalette::Mid, QColor(0x24, 0x24, 0x24));
    p.setColor(QPalette::Dark, QColor(0x1a, 0x1a, 0x1a));
    p.setColor(QPalette::Shadow, QColor(0x10, 0x10, 0x10));
    p.setColor(QPalette::Disabled, QPalette::Light, window);
    p.setColor(QPalette::Disabled, QPalette::Text, QColor(0x80, 0x80, 0x80));
    p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(0x80, 0x80, 0x80));
    p.setColor(QPalette::Disabled, QPalette::WindowText, QColor(0x80, 0x80, 0x80));
    QApplication::setPalette(p);
    QToolTip::setPalette(p);
}

QColor errorColor(bool dark)
{
    return dark ? QColor(0xff, 0x6b, 0x6b) : QColor(0xb0, 0x1c, 0x1c);
}

QColor errorTextColor(const QPalette &palette)
{
    return errorColor(palette.color(QPalette::Base).lightness() < 128);
}

QColor goodTextColor(const QPalette &palette)
{
    return palette.color(QPalette::Base).lightness() < 128 ? QColor(0x6f, 0xd0, 0x8c) : QColor(0x1b, 0x7a, 0x3a);
}

QColor warningTextColor(const QPalette &palette)
{
    return palette.color(QPalette::Base).lightness() < 128 ? QColor(0xff, 0xb3, 0x47) : QColor(0x9a, 0x52, 0x00);
}

QColor measuredColor(const QPalette &palette)
{
    return palette.color(QPalette::Base).lightness() < 128 ? QColor(0xc7, 0x92, 0xff) : QColor(0x7b, 0x2c, 0xbf);
}

namespace {

// WCAG 2.x relative luminance: sRGB channels linearised, weighted 0.2126, 0.7152, 0.0722.
double luminance(const QColor &c)
{
    const auto linear = [](double v) { return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * linear(c.redF()) + 0.7152 * linear(c.greenF()) + 0.0722 * linear(c.blueF());
}

} // namespace

double contrastRatio(const QColor &a, const QColor &b)
{
    const double la = luminance(a), lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

QColor textColorOn(const QColor &fill)
{
    const QColor light(Qt::white), dark(0x1a, 0x1a, 0x1a);
    return contrastRatio(fill, light) >= contrastRatio(fill, dark) ? light : dark;
}

} // namespace memledger::ui
