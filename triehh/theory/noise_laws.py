"""The laws of the server's noise a planned noisy-trie run may draw
(``docs/noisy-trie.md``, "The noise's law"): the discrete Gaussian (sigma,
composed by its PLD: ``(epsilon, delta)``) or the discrete Laplace (scale
b, pure DP, composed by adding epsilons: ``(epsilon, 0)``)."""

GAUSSIAN, LAPLACE = "gaussian", "laplace"
NOISE_LAWS = (GAUSSIAN, LAPLACE)
