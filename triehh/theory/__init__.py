"""The paper's theory: Theorem 1 / Corollary 1 (privacy) and Proposition 2
(utility)."""
