#include "data/chirp.h"

#include <cmath>
#include <initializer_list>

#include "util/random.h"

namespace ct {

void ChirpRow(const ChirpOptions& options, int64_t row, float* noisy, float* clean, float* params) {
  constexpr double kTwoPi = 6.283185307179586;
  SplitMix64 rng(MixSeed(options.seed, static_cast<uint64_t>(row) + 1));

  // Per-waveform parameters: merger time, starting frequency (cycles per window), amplitude,
  // phase, ringdown damping time. Waveforms are roughly aligned at merger, as in catalogues of
  // simulated signals, so that a small model can learn them.
  const double t_merge = rng.Uniform(0.75, 0.85);
  const double f_start = rng.Uniform(3.0, 6.0);
  const double amplitude = rng.Uniform(0.5, 1.0);
  const double phase0 = rng.Uniform(0.0, kTwoPi);
  const double damping = rng.Uniform(0.01, 0.03);
  if (params) {
    for (const double value : {t_merge, f_start, amplitude, phase0, damping}) *params++ = static_cast<float>(value);
  }

  // Newtonian inspiral: time to merger tau, f ~ tau^(-3/8), amplitude ~ f^(2/3) ~ tau^(-1/4).
  // tau0 regularises the merger; phase is the integral of 2*pi*f.
  const double tau0 = 0.02;
  const double tau_max = t_merge + tau0;
  const double k = f_start * std::pow(tau_max, 0.375);  // f(tau) = k * tau^(-3/8)
  auto phase_at = [&](double tau) {
    return phase0 + kTwoPi * k * (std::pow(tau_max, 0.625) - std::pow(tau, 0.625)) / 0.625;
  };
  const double peak_envelope = std::pow(tau0 / tau_max, -0.25);
  const double phase_merge = phase_at(tau0);
  const double f_merge = k * std::pow(tau0, -0.375);

  const double dt = 1.0 / static_cast<double>(options.length);
  for (int64_t i = 0; i < options.length; ++i) {
    const double t = static_cast<double>(i) * dt;
    double h;
    if (t < t_merge) {
      const double tau = t_merge - t + tau0;
      h = amplitude * std::pow(tau / tau_max, -0.25) / peak_envelope * std::cos(phase_at(tau));
    } else {
      // Ringdown: a damped sinusoid continuing at the merger frequency and phase.
      const double s = t - t_merge;
      h = amplitude * std::exp(-s / damping) * std::cos(phase_merge + kTwoPi * f_merge * s);
    }
    clean[i] = static_cast<float>(h);
    noisy[i] = static_cast<float>(h + options.noise_std * rng.Normal());
  }
}

}  // namespace ct
