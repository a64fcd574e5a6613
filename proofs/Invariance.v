(* Issue 8, item 9: every metric is invariant under permutation of the rollouts (INV-PERM),
   and every integer count of a concatenation of cohorts is the sum of the parts' counts
   (INV-ADDITIVE), which is what makes scoring shards separately and adding their counts
   exact. Also INV-LABEL-SUM: the label counts sum to RR-Eligible. *)

From Coq Require Import List Arith Lia QArith Permutation.
From Prefixexec Require Import Cohort.
Import ListNotations.

(* Every count, and max T, is invariant under permutation. *)
Lemma counts_perm : forall c c', Permutation c c' ->
  N c = N c'
  /\ (forall k, survivors c k = survivors c' k)
  /\ (forall k, n_k c k = n_k c' k)
  /\ (forall k, elig_survivors c k = elig_survivors c' k)
  /\ fully_executable c = fully_executable c'
  /\ rr_eligible c = rr_eligible c'
  /\ recovered c = recovered c'
  /\ successes c = successes c'
  /\ uninterrupted c = uninterrupted c'
  /\ sum_fed c = sum_fed c'
  /\ max_T c = max_T c'
  /\ (forall l, label_count c l = label_count c' l).
Proof.
  intros c c' H. unfold N, survivors, n_k, elig_survivors, fully_executable, rr_eligible,
    recovered, successes, uninterrupted, label_count.
  repeat split; intros; try apply count_perm; try assumption.
  - apply Permutation_length. exact H.
  - apply sum_fed_perm. exact H.
  - apply max_T_perm. exact H.
Qed.

(* spec: INV-PERM *)
Theorem metrics_perm_invariant : forall c c', Permutation c c' ->
  (forall k, PEC c k == PEC c' k)
  /\ (forall k, PEC_elig c k == PEC_elig c' k)
  /\ (forall k, n_k c k = n_k c' k)
  /\ TER c == TER c'
  /\ AUC_PEC c == AUC_PEC c'
  /\ AUC_PEC_area c == AUC_PEC_area c'
  /\ mean_FED c == mean_FED c'
  /\ success c == success c'
  /\ RR c == RR c'
  /\ s_exec c == s_exec c'
  /\ N c = N c'
  /\ rr_eligible c = rr_eligible c'
  /\ recovered c = recovered c'
  /\ fully_executable c = fully_executable c'
  /\ uninterrupted c = uninterrupted c'
  /\ max_T c = max_T c'
  /\ (forall l, label_count c l = label_count c' l).
Proof.
  intros c c' H.
  destruct (counts_perm c c' H)
    as [EN [Es [Enk [Ee [Ef [Er [Erec [Esucc [Eu [Esum [Emax El]]]]]]]]]]].
  unfold PEC, PEC_elig, TER, AUC_PEC, AUC_PEC_area, mean_FED, success, RR, s_exec.
  repeat split; intros;
    rewrite ?EN, ?Es, ?Enk, ?Ee, ?Ef, ?Er, ?Erec, ?Esucc, ?Eu, ?Esum, ?Emax, ?El;
    try reflexivity.
  - rewrite (Qsum_perm auc_term c c' H). reflexivity.
  - rewrite (Qsum_perm area c c' H). reflexivity.
Qed.

(* spec: INV-ADDITIVE *)
Theorem counts_additive : forall c1 c2,
  N (c1 ++ c2) = (N c1 + N c2)%nat
  /\ (forall k, survivors (c1 ++ c2) k = (survivors c1 k + survivors c2 k)%nat)
  /\ (forall k, n_k (c1 ++ c2) k = (n_k c1 k + n_k c2 k)%nat)
  /\ (forall k, elig_survivors (c1 ++ c2) k = (elig_survivors c1 k + elig_survivors c2 k)%nat)
  /\ fully_executable (c1 ++ c2) = (fully_executable c1 + fully_executable c2)%nat
  /\ rr_eligible (c1 ++ c2) = (rr_eligible c1 + rr_eligible c2)%nat
  /\ recovered (c1 ++ c2) = (recovered c1 + recovered c2)%nat
  /\ successes (c1 ++ c2) = (successes c1 + successes c2)%nat
  /\ uninterrupted (c1 ++ c2) = (uninterrupted c1 + uninterrupted c2)%nat
  /\ sum_fed (c1 ++ c2) = (sum_fed c1 + sum_fed c2)%nat
  /\ (forall l, label_count (c1 ++ c2) l = (label_count c1 l + label_count c2 l)%nat)
  /\ max_T (c1 ++ c2) = Nat.max (max_T c1) (max_T c2).
Proof.
  intros c1 c2. unfold N, survivors, n_k, elig_survivors, fully_executable, rr_eligible,
    recovered, successes, uninterrupted, label_count.
  repeat split; intros; try apply count_app.
  - apply app_length.
  - apply sum_fed_app.
  - apply max_T_app.
Qed.

(* The rational numerator of AUC-PEC adds too, so a sharded AUC-PEC is exact as well. *)
(* spec: INV-ADDITIVE *)
Theorem auc_sum_additive : forall c1 c2,
  Qsum auc_term (c1 ++ c2) == Qsum auc_term c1 + Qsum auc_term c2.
Proof. intros c1 c2. apply Qsum_app. Qed.

(* Scoring the concatenation equals scoring from the parts' summed counts: the cohort of
   two shards has the PEC, TER and success of the added counts, in either order of shards. *)
(* spec: INV-ADDITIVE *)
Theorem sharded_metrics_exact : forall c1 c2 k,
  PEC (c1 ++ c2) k == ratio (survivors c1 k + survivors c2 k) (N c1 + N c2)
  /\ TER (c1 ++ c2) == ratio (fully_executable c1 + fully_executable c2) (N c1 + N c2)
  /\ success (c1 ++ c2) == ratio (successes c1 + successes c2) (N c1 + N c2)
  /\ TER (c1 ++ c2) == TER (c2 ++ c1).
Proof.
  intros c1 c2 k. destruct (counts_additive c1 c2) as [EN [Es [_ [_ [Ef [_ [_ [Esu _]]]]]]]].
  destruct (metrics_perm_invariant (c1 ++ c2) (c2 ++ c1) (Permutation_app_comm c1 c2))
    as [_ [_ [_ [Eter _]]]].
  split; [|split; [|split; [|exact Eter]]]; unfold PEC, TER, success;
    rewrite ?EN, ?Es, ?Ef, ?Esu; reflexivity.
Qed.

(* Each rollout matches exactly one of "unlabelled" and the five labels. *)
Lemma label_matches_one : forall r,
  list_sum (map (fun l => if label_matches l r then 1 else 0)%nat (None :: map Some label_order))
  = 1%nat.
Proof. intros r. unfold label_matches. destruct (lab r) as [[]|]; reflexivity. Qed.

(* INV-LABEL-SUM: summed over "unlabelled" and the five labels, the label counts give
   RR-Eligible; every failing rollout is counted exactly once. *)
(* spec: INV-LABEL-SUM *)
Theorem label_counts_sum : forall c,
  list_sum (map (label_count c) (None :: map Some label_order)) = rr_eligible c.
Proof.
  intros c. unfold label_count, rr_eligible.
  induction c as [|r c IH]; [reflexivity|].
  pose proof (label_matches_one r) as H1. cbn -[label_matches] in *.
  destruct (FED r <=? T r); cbn -[label_matches] in *; lia.
Qed.
