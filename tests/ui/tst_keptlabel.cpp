// SPDX-License-Identifier: MIT
// KeptLabel: a QLabel that keeps its text's image and its sizes. It must look
// and measure exactly as QLabel does, and not lay out or shape its text again
// while nothing it depends on changed (issue 16: a relayout of the control
// panel painted each row's label and measured each word-wrapped note anew).
#include <QApplication>
#include <QImage>
#include <QLabel>
#include <QPalette>

#include "catchqt.h"
#include "ui/paint/keptlabel.h"

using memledger::ui::KeptLabel;

namespace {

// The same text, flags and size in a QLabel and a KeptLabel, as a form row or note has them.
void configure(QLabel &label, const QString &text, bool wrap, int width)
{
    label.setText(text);
    label.setWordWrap(wrap);
    label.setTextFormat(Qt::PlainText);
    label.resize(width, wrap ? label.heightForWidth(width) : label.sizeHint().height());
}

} // namespace

TEST_CASE("A kept label draws and measures its text as QLabel does", "[ui][controls][bench]")
{
    const QString note = QStringLiteral("num_attention_heads (64) is not divisible by tensor_model_parallel_size (3) "
                                        "— use 1, 2, 4 or 8");
    for (const bool wrap : {false, true}) {
        for (const bool enabled : {true, false}) {
            QLabel plain;
            KeptLabel kept;
            configure(plain, wrap ? note : QStringLiteral("Tensor (t)"), wrap, 220);
            configure(kept, wrap ? note : QStringLiteral("Tensor (t)"), wrap, 220);
            for (QLabel *label : {&plain, static_cast<QLabel *>(&kept)}) {
                QPalette pal = label->palette();
                pal.setColor(QPalette::WindowText, QColor(0xb0, 0x20, 0x20)); // the notes' error colour
                label->setPalette(pal);
                label->setEnabled(enabled);
            }
            INFO("wrap " << wrap << ", enabled " << enabled);
            CHECK(kept.sizeHint() == plain.sizeHint());
            CHECK(kept.minimumSizeHint() == plain.minimumSizeHint());
            for (const int width : {120, 220, 400})
                CHECK(kept.heightForWidth(width) == plain.heightForWidth(width));
            REQUIRE(kept.size() == plain.size());
            CHECK(kept.grab().toImage() == plain.grab().toImage()); // the same pixels
            CHECK(kept.drawn() == 1);
        }
    }
}

TEST_CASE("A kept label shapes its text once while nothing it depends on changes", "[ui][controls][bench]")
{
    KeptLabel label;
    label.setTextFormat(Qt::PlainText);
    label.setWordWrap(true);
    label.setText(QStringLiteral("the sequence on each context-parallel rank must split into 2·c chunks"));
    label.resize(200, label.heightForWidth(200));
    const int measured = label.measured();
    CHECK(measured >= 1);
    for (int i = 0; i < 5; ++i) {
        label.sizeHint();
        label.minimumSizeHint();
        label.heightForWidth(200);
    }
    CHECK(label.measured() == measured + 2); // the two hints, once each; the height at 200 was kept

    const QImage first = label.grab().toImage();
    label.grab();
    label.grab();
    CHECK(label.drawn() == 1); // painted three times, drawn once

    // What it depends on: a new text, colour or size draws and measures again.
    label.setText(QStringLiteral("another note"));
    CHECK(label.heightForWidth(200) > 0);
    CHECK(label.measured() == measured + 3);
    label.grab();
    CHECK(label.drawn() == 2);
    QPalette pal = label.palette();
    pal.setColor(QPalette::WindowText, Qt::red);
    label.setPalette(pal);
    label.grab();
    CHECK(label.drawn() == 3);
    label.resize(300, label.height());
    label.grab();
    CHECK(label.drawn() == 4);

    // A note kept blank (drawn in no colour, see ControlPanel::showProblems) draws nothing.
    pal.setColor(QPalette::WindowText, Qt::transparent);
    label.setPalette(pal);
    label.grab();
    CHECK(label.drawn() == 4);

    // Rich text is QLabel's own: drawn as QLabel draws it, nothing kept.
    KeptLabel rich;
    QLabel plain;
    for (QLabel *l : {static_cast<QLabel *>(&rich), &plain}) {
        l->setText(QStringLiteral("<b>128</b> = t·p·d·c"));
        l->resize(l->sizeHint());
    }
    CHECK(rich.grab().toImage() == plain.grab().toImage());
    CHECK(rich.drawn() == 0);
}
