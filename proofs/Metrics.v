(* The exact properties of the cohort metrics (issue 8, items 2-8): PEC bounds and zeros,
   EQ-7, TER <= AUC-PEC <= 1, RR-Eligible, EQ-10, TER under a common horizon, EQ-12. *)

From Coq Require Import List Arith Lia QArith.
From Prefixexec Require Import Cohort.
Import ListNotations.

(* ------------------------------------------------------------------------------------ *)
(* PEC                                                                                   *)

(* spec: INV-PEC-MONO *)
Theorem pec_antitone : forall c k1 k2, (k1 <= k2)%nat -> PEC c k2 <= PEC c k1.
Proof.
  intros c k1 k2 Hk. unfold PEC, survivors. apply ratio_le_num, count_mono.
  intros r _ H. apply Nat.ltb_lt in H. apply Nat.ltb_lt. lia.
Qed.

(* spec: INV-PEC-MONO *)
Theorem pec_bounded : forall c k, 0 <= PEC c k <= 1.
Proof.
  intros c k. unfold PEC. split; [apply ratio_nonneg|].
  apply ratio_le_1, count_le_length.
Qed.

(* spec: INV-PEC-ZERO *)
Theorem pec_zero_beyond : forall c k, valid_cohort c -> (max_T c < k)%nat -> PEC c k == 0.
Proof.
  intros c k Hc Hk. unfold PEC, survivors.
  rewrite count_false_in; [apply ratio_zero_num|].
  intros r Hin. destruct (valid_cohort_in c r Hc Hin) as [_ [_ Hfed]].
  pose proof (max_T_ge c r Hin). apply Nat.ltb_ge. lia.
Qed.

(* Under INV-FED-RANGE, FED > k implies T >= k: the numerator of EQ-6 is that of EQ-4. *)
Lemma elig_survivors_eq : forall c k, valid_cohort c -> elig_survivors c k = survivors c k.
Proof.
  intros c k Hc. unfold elig_survivors, survivors. apply count_ext_in.
  intros r Hin. destruct (valid_cohort_in c r Hc Hin) as [_ [_ Hfed]].
  destruct (Nat.ltb_spec k (FED r)); [|apply andb_false_r].
  rewrite andb_true_r. apply Nat.leb_le. lia.
Qed.

(* spec: EQ-7 *)
Theorem eq7_support_decomposition : forall c k,
  valid_cohort c -> (0 < n_k c k)%nat ->
  PEC c k == ratio (n_k c k) (N c) * PEC_elig c k.
Proof.
  intros c k Hc Hn. unfold PEC, PEC_elig, ratio. rewrite elig_survivors_eq by exact Hc.
  assert (HN : (0 < N c)%nat) by (pose proof (count_le_length (fun r => k <=? T r) c);
                                  unfold n_k, N in *; lia).
  field. split; apply Q_of_nat_pos; assumption.
Qed.

(* ------------------------------------------------------------------------------------ *)
(* TER, AUC-PEC and RR-Eligible                                                          *)

(* Per rollout: 1{FED = T + 1} <= (FED - 1)/T <= 1. *)
Lemma fully_le_auc_term : forall r,
  valid r -> (if FED r =? T r + 1 then 1 else 0) <= auc_term r.
Proof.
  intros r [HT Hfed]. unfold auc_term. destruct (Nat.eqb_spec (FED r) (T r + 1)) as [E|E].
  - replace (FED r - 1)%nat with (T r) by lia. rewrite ratio_self by lia. apply Qle_refl.
  - apply ratio_nonneg.
Qed.

Lemma auc_term_le_1 : forall r, valid r -> auc_term r <= 1.
Proof. intros r [HT Hfed]. unfold auc_term. apply ratio_le_1. lia. Qed.

(* spec: INV-TER-AUC *)
Theorem ter_le_auc : forall c, valid_cohort c -> 0 <= TER c /\ TER c <= AUC_PEC c.
Proof.
  intros c Hc. unfold TER. split; [apply ratio_nonneg|].
  unfold ratio, fully_executable, AUC_PEC. rewrite Q_of_nat_count.
  apply div_le_compat, Qsum_le. intros r Hin. apply fully_le_auc_term.
  exact (valid_cohort_in c r Hc Hin).
Qed.

(* spec: INV-TER-AUC *)
Theorem auc_le_1 : forall c, valid_cohort c -> 0 <= AUC_PEC c /\ AUC_PEC c <= 1.
Proof.
  intros c Hc. unfold AUC_PEC. split.
  - unfold Qdiv. apply Qmult_le_0_compat; [|apply Qinv_le_0_compat, Q_of_nat_nonneg].
    apply Qle_trans with (Qsum (fun _ => 0) c).
    + clear Hc. induction c as [|r c IH]; simpl; [apply Qle_refl|].
      rewrite Qplus_0_l. exact IH.
    + apply Qsum_le. intros r _. apply ratio_nonneg.
  - apply div_le_1. unfold N. rewrite Q_of_nat_length. apply Qsum_le.
    intros r Hin. apply auc_term_le_1. exact (valid_cohort_in c r Hc Hin).
Qed.

(* spec: INV-RR-ELIG *)
Theorem rr_eligible_complement : forall c,
  valid_cohort c -> (rr_eligible c + fully_executable c = N c)%nat.
Proof.
  intros c Hc. unfold rr_eligible, fully_executable, N.
  induction Hc as [|r c [HT Hfed] _ IH]; simpl; [reflexivity|].
  destruct (Nat.leb_spec (FED r) (T r)), (Nat.eqb_spec (FED r) (T r + 1)); lia.
Qed.

(* The same in Q, as EQ-9's summary states it: RR-Eligible = N (1 - TER). *)
(* spec: INV-RR-ELIG *)
Theorem rr_eligible_ter : forall c,
  valid_cohort c -> Q_of_nat (rr_eligible c) == Q_of_nat (N c) * (1 - TER c).
Proof.
  intros c Hc. pose proof (rr_eligible_complement c Hc) as H. unfold TER, ratio.
  destruct (Nat.eq_dec (N c) 0) as [E0|E0].
  - assert (E : rr_eligible c = 0%nat) by lia. rewrite E, E0. reflexivity.
  - assert (Hn : ~ Q_of_nat (N c) == 0) by (apply Q_of_nat_pos; lia).
    rewrite <- H, Q_of_nat_add in *. field. exact Hn.
Qed.

(* ------------------------------------------------------------------------------------ *)
(* EQ-10: the two forms of AUC-PEC                                                       *)

Lemma area_count_min : forall f t,
  list_sum (map (fun k => if k <? f then 1 else 0)%nat (seq 1 t)) = Nat.min (f - 1) t.
Proof.
  intros f t. induction t as [|t IH]; [simpl; lia|].
  rewrite seq_S, map_app, list_sum_app, IH. simpl.
  destruct (Nat.ltb_spec (S t) f); simpl; lia.
Qed.

(* spec: EQ-10 *)
Theorem eq10_area_forms : forall r,
  valid r -> area_count r = (FED r - 1)%nat /\ area r == auc_term r.
Proof.
  intros r [HT Hfed].
  assert (E : area_count r = (FED r - 1)%nat) by (unfold area_count; rewrite area_count_min; lia).
  split; [exact E|]. unfold area, auc_term. rewrite E. reflexivity.
Qed.

(* spec: EQ-10 *)
Theorem auc_forms_agree : forall c, valid_cohort c -> AUC_PEC_area c == AUC_PEC c.
Proof.
  intros c Hc. unfold AUC_PEC_area, AUC_PEC. apply Qdiv_comp; [|reflexivity].
  apply Qsum_ext_in. intros r Hin. apply eq10_area_forms. exact (valid_cohort_in c r Hc Hin).
Qed.

(* ------------------------------------------------------------------------------------ *)
(* TER under a common horizon                                                            *)

(* spec: INV-TER-HORIZON *)
Theorem ter_common_horizon : forall c T0,
  valid_cohort c -> (forall r, In r c -> T r = T0) -> TER c == PEC c T0.
Proof.
  intros c T0 Hc HT. unfold TER, PEC, fully_executable, survivors.
  rewrite (count_ext_in _ (fun r => T0 <? FED r)); [reflexivity|].
  intros r Hin. destruct (valid_cohort_in c r Hc Hin) as [_ [_ Hfed]].
  rewrite (HT r Hin) in *.
  destruct (Nat.eqb_spec (FED r) (T0 + 1)), (Nat.ltb_spec T0 (FED r)); reflexivity || lia.
Qed.

(* ------------------------------------------------------------------------------------ *)
(* EQ-12: success = q s + (1 - q) r                                                      *)

(* The integer split of the output: successes = uninterrupted + recovered. *)
(* spec: EQ-12 *)
Theorem successes_split : forall c,
  valid_cohort c -> successes c = (uninterrupted c + recovered c)%nat.
Proof.
  intros c Hc. unfold successes, uninterrupted, recovered.
  induction Hc as [|r c [HT Hfed] _ IH]; simpl; [reflexivity|].
  destruct (Y r); simpl;
    [destruct (Nat.leb_spec (FED r) (T r)), (Nat.eqb_spec (FED r) (T r + 1)) | ]; lia.
Qed.

(* spec: EQ-12 *)
Theorem eq12_decomposition : forall c,
  valid_cohort c -> 0 < TER c -> TER c < 1 ->
  success c == TER c * s_exec c + (1 - TER c) * RR c.
Proof.
  intros c Hc Hq0 Hq1. pose proof (rr_eligible_complement c Hc) as Hsum.
  pose proof (successes_split c Hc) as Hsplit.
  unfold TER, success, s_exec, RR in *.
  (* q > 0 needs a fully executable rollout, q < 1 an RR-eligible one. *)
  assert (HF : (0 < fully_executable c)%nat).
  { destruct (fully_executable c) eqn:E; [|lia].
    exfalso. rewrite ratio_zero_num in Hq0. exact (Qlt_irrefl 0 Hq0). }
  assert (HE : (0 < rr_eligible c)%nat).
  { destruct (rr_eligible c) eqn:E; [|lia].
    exfalso. rewrite <- Hsum in Hq1. simpl in Hq1. rewrite ratio_self in Hq1 by lia.
    exact (Qlt_irrefl 1 Hq1). }
  assert (HnN : ~ Q_of_nat (N c) == 0) by (apply Q_of_nat_pos; lia).
  apply Q_of_nat_pos in HF. apply Q_of_nat_pos in HE.
  unfold ratio. rewrite Hsplit, <- Hsum, !Q_of_nat_add in *.
  field. auto.
Qed.
