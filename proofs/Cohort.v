(* Definitions of spec/SPEC.md for one cohort: rollouts, integer counts and the exact
   rational metrics built from them, with the list lemmas the theorems use.

   A rollout is (T, FED, Y) as in the spec's notation, plus the optional first-failure label
   of CONV-LABEL-ORDER (diagnostic only: no metric reads it, only the label counts).
   A cohort is a list of rollouts, in any order. Counts are [nat]; every ratio is a [Q] built
   as (count) / (count), exactly as the Python kernel builds a [fractions.Fraction]. *)

From Coq Require Import List Arith Lia QArith Permutation.
Import ListNotations.
Local Open Scope nat_scope.

(* ------------------------------------------------------------------------------------ *)
(* Rollouts and cohorts                                                                  *)

Inductive label : Set :=
  | Schema | Dependency | Precondition | StateConsistency | Information.

(* The tie-break order of CONV-LABEL-ORDER, first to last. *)
Definition label_order : list label :=
  [Schema; Dependency; Precondition; StateConsistency; Information].

Definition label_eqb (a b : label) : bool :=
  match a, b with
  | Schema, Schema | Dependency, Dependency | Precondition, Precondition
  | StateConsistency, StateConsistency | Information, Information => true
  | _, _ => false
  end.

Record rollout : Set := mk_rollout {
  T : nat;               (* horizon: number of tool-action slots *)
  FED : nat;             (* first-error depth (EQ-1) *)
  Y : bool;              (* final success, the benchmark's own verdict *)
  lab : option label     (* primary first-failure label; None = unlabelled *)
}.

(* INV-FED-RANGE: T >= 1 and 1 <= FED <= T + 1. *)
Definition valid (r : rollout) : Prop := 1 <= T r /\ 1 <= FED r <= T r + 1.

Definition cohort : Set := list rollout.

Definition valid_cohort (c : cohort) : Prop := Forall valid c.

Lemma valid_cohort_in : forall c r, valid_cohort c -> In r c -> valid r.
Proof. intros c r Hc Hin. exact (proj1 (Forall_forall valid c) Hc r Hin). Qed.

(* ------------------------------------------------------------------------------------ *)
(* Integer counts                                                                        *)

(* count p c = sum_i 1{p(rollout i)} *)
Fixpoint count (p : rollout -> bool) (c : cohort) : nat :=
  match c with
  | [] => 0
  | r :: c' => (if p r then 1 else 0) + count p c'
  end.

Definition N (c : cohort) : nat := length c.

(* Numerator of EQ-4: #{i : FED_i > k}. *)
Definition survivors (c : cohort) (k : nat) : nat := count (fun r => k <? FED r) c.

(* EQ-5: n_k = #{i : T_i >= k}. *)
Definition n_k (c : cohort) (k : nat) : nat := count (fun r => k <=? T r) c.

(* Numerator of EQ-6: #{i : T_i >= k and FED_i > k}. *)
Definition elig_survivors (c : cohort) (k : nat) : nat :=
  count (fun r => (k <=? T r) && (k <? FED r)) c.

(* Numerator of EQ-8: #{i : FED_i = T_i + 1}. *)
Definition fully_executable (c : cohort) : nat := count (fun r => FED r =? T r + 1) c.

(* EQ-9: RR-Eligible = #{i : FED_i <= T_i} and recovered = #{i : Y_i = 1, FED_i <= T_i}. *)
Definition rr_eligible (c : cohort) : nat := count (fun r => FED r <=? T r) c.
Definition recovered (c : cohort) : nat := count (fun r => Y r && (FED r <=? T r)) c.

(* MET-SUCCESS numerator, and the successes of fully executable rollouts (EQ-12). *)
Definition successes (c : cohort) : nat := count Y c.
Definition uninterrupted (c : cohort) : nat := count (fun r => Y r && (FED r =? T r + 1)) c.

(* MET-LABELS: failing rollouts whose primary label is [l] (None = unlabelled). *)
Definition label_matches (l : option label) (r : rollout) : bool :=
  match lab r, l with
  | None, None => true
  | Some a, Some b => label_eqb a b
  | _, _ => false
  end.

Definition label_count (c : cohort) (l : option label) : nat :=
  count (fun r => (FED r <=? T r) && label_matches l r) c.

(* MET-MEAN-FED numerator: sum_i FED_i. *)
Fixpoint sum_fed (c : cohort) : nat :=
  match c with
  | [] => 0
  | r :: c' => FED r + sum_fed c'
  end.

(* max_i T_i (0 for the empty cohort). *)
Fixpoint max_T (c : cohort) : nat :=
  match c with
  | [] => 0
  | r :: c' => Nat.max (T r) (max_T c')
  end.

(* EQ-10, left-hand form: sum_{k=1..T} 1{FED > k}, the area under one rollout's profile. *)
Definition area_count (r : rollout) : nat :=
  list_sum (map (fun k => if k <? FED r then 1 else 0) (seq 1 (T r))).

(* ------------------------------------------------------------------------------------ *)
(* Exact rational metrics                                                                *)

Local Open Scope Q_scope.

Definition Q_of_nat (n : nat) : Q := inject_Z (Z.of_nat n).

(* a / b in Q. Coq's [x / 0] is 0; the Python kernel returns None (CONV-UNDEFINED) for the
   ratios whose denominator can be 0 (RR, PEC_elig, s), and the theorems below that read
   those ratios assume the denominator positive. *)
Definition ratio (a b : nat) : Q := Q_of_nat a / Q_of_nat b.

(* sum_i f(rollout i) in Q. *)
Fixpoint Qsum (f : rollout -> Q) (c : cohort) : Q :=
  match c with
  | [] => 0
  | r :: c' => f r + Qsum f c'
  end.

Definition PEC (c : cohort) (k : nat) : Q := ratio (survivors c k) (N c).            (* EQ-4 *)
Definition PEC_elig (c : cohort) (k : nat) : Q := ratio (elig_survivors c k) (n_k c k). (* EQ-6 *)
Definition TER (c : cohort) : Q := ratio (fully_executable c) (N c).                  (* EQ-8 *)
Definition RR (c : cohort) : Q := ratio (recovered c) (rr_eligible c).                (* EQ-9 *)
Definition mean_FED (c : cohort) : Q := ratio (sum_fed c) (N c).               (* MET-MEAN-FED *)
Definition success (c : cohort) : Q := ratio (successes c) (N c).               (* MET-SUCCESS *)
(* EQ-12: s = Pr(Y = 1 | FED = T + 1), empirically. *)
Definition s_exec (c : cohort) : Q := ratio (uninterrupted c) (fully_executable c).

(* EQ-11 / EQ-10 right-hand form: (1/N) sum_i (FED_i - 1) / T_i. *)
Definition auc_term (r : rollout) : Q := ratio (FED r - 1)%nat (T r).
Definition AUC_PEC (c : cohort) : Q := Qsum auc_term c / Q_of_nat (N c).

(* EQ-10 left-hand form: (1/N) sum_i (1/T_i) sum_{k=1..T_i} 1{FED_i > k}. *)
Definition area (r : rollout) : Q := ratio (area_count r) (T r).
Definition AUC_PEC_area (c : cohort) : Q := Qsum area c / Q_of_nat (N c).

(* ------------------------------------------------------------------------------------ *)
(* Lemmas on counts                                                                      *)

Local Open Scope nat_scope.

Lemma count_app : forall p c1 c2, count p (c1 ++ c2) = count p c1 + count p c2.
Proof. intros p c1 c2. induction c1 as [|r c1 IH]; simpl; lia. Qed.

Lemma count_perm : forall p c c', Permutation c c' -> count p c = count p c'.
Proof. intros p c c' H. induction H; simpl; lia. Qed.

Lemma count_ext_in : forall p q c,
  (forall r, In r c -> p r = q r) -> count p c = count q c.
Proof.
  intros p q c. induction c as [|r c IH]; intros H; simpl; [reflexivity|].
  rewrite (H r (or_introl eq_refl)), IH; [reflexivity|].
  intros r' Hr'. apply H. right. exact Hr'.
Qed.

Lemma count_mono : forall p q c,
  (forall r, In r c -> p r = true -> q r = true) -> count p c <= count q c.
Proof.
  intros p q c. induction c as [|r c IH]; intros H; simpl; [lia|].
  assert (Hr := H r (or_introl eq_refl)).
  assert (Hc : count p c <= count q c) by (apply IH; intros r' Hin; apply H; right; exact Hin).
  destruct (p r), (q r); [lia | discriminate (Hr eq_refl) | lia | lia].
Qed.

Lemma count_le_length : forall p c, count p c <= length c.
Proof. intros p c. induction c as [|r c IH]; simpl; [lia|]. destruct (p r); lia. Qed.

Lemma count_true : forall c, count (fun _ => true) c = length c.
Proof. intros c. induction c as [|r c IH]; simpl; lia. Qed.

Lemma count_false_in : forall p c, (forall r, In r c -> p r = false) -> count p c = 0.
Proof.
  intros p c H. rewrite (count_ext_in p (fun _ => false) c H).
  clear H. induction c as [|r c IH]; simpl; [reflexivity | exact IH].
Qed.

Lemma max_T_ge : forall c r, In r c -> T r <= max_T c.
Proof.
  intros c. induction c as [|r' c IH]; intros r Hin; simpl in *; [contradiction|].
  destruct Hin as [<-|Hin]; [lia|]. specialize (IH r Hin). lia.
Qed.

Lemma max_T_app : forall c1 c2, max_T (c1 ++ c2) = Nat.max (max_T c1) (max_T c2).
Proof. intros c1 c2. induction c1 as [|r c1 IH]; simpl; lia. Qed.

Lemma max_T_perm : forall c c', Permutation c c' -> max_T c = max_T c'.
Proof. intros c c' H. induction H; simpl; lia. Qed.

Lemma sum_fed_app : forall c1 c2, sum_fed (c1 ++ c2) = sum_fed c1 + sum_fed c2.
Proof. intros c1 c2. induction c1 as [|r c1 IH]; simpl; lia. Qed.

Lemma sum_fed_perm : forall c c', Permutation c c' -> sum_fed c = sum_fed c'.
Proof. intros c c' H. induction H; simpl; lia. Qed.

(* ------------------------------------------------------------------------------------ *)
(* Lemmas on Q                                                                           *)

Local Open Scope Q_scope.

Lemma Q_of_nat_add : forall a b, Q_of_nat (a + b) == Q_of_nat a + Q_of_nat b.
Proof. intros a b. unfold Q_of_nat. rewrite Nat2Z.inj_add, inject_Z_plus. reflexivity. Qed.

Lemma Q_of_nat_le : forall a b, (a <= b)%nat -> Q_of_nat a <= Q_of_nat b.
Proof. intros a b H. unfold Q_of_nat. rewrite <- Zle_Qle. lia. Qed.

Lemma Q_of_nat_nonneg : forall a, 0 <= Q_of_nat a.
Proof. intros a. apply (Q_of_nat_le 0 a). lia. Qed.

Lemma Q_of_nat_pos : forall a, (0 < a)%nat -> ~ Q_of_nat a == 0.
Proof. intros a Ha H. unfold Q_of_nat, Qeq in H. simpl in H. lia. Qed.

Lemma Q_of_nat_zero : Q_of_nat 0 == 0.
Proof. reflexivity. Qed.

Lemma ratio_zero_den : forall a, ratio a 0 == 0.
Proof. intros a. unfold ratio, Qdiv. rewrite Q_of_nat_zero. simpl. apply Qmult_0_r. Qed.

Lemma ratio_zero_num : forall b, ratio 0 b == 0.
Proof. intros b. unfold ratio, Qdiv. apply Qmult_0_l. Qed.

Lemma ratio_nonneg : forall a b, 0 <= ratio a b.
Proof.
  intros a b. unfold ratio, Qdiv.
  apply Qmult_le_0_compat; [apply Q_of_nat_nonneg|].
  apply Qinv_le_0_compat, Q_of_nat_nonneg.
Qed.

Lemma div_le_compat : forall x y n, x <= y -> x / Q_of_nat n <= y / Q_of_nat n.
Proof.
  intros x y n H. unfold Qdiv. apply Qmult_le_compat_r; [exact H|].
  apply Qinv_le_0_compat, Q_of_nat_nonneg.
Qed.

Lemma ratio_le_num : forall a a' b, (a <= a')%nat -> ratio a b <= ratio a' b.
Proof. intros a a' b H. apply div_le_compat, Q_of_nat_le, H. Qed.

Lemma div_le_1 : forall x n, x <= Q_of_nat n -> x / Q_of_nat n <= 1.
Proof.
  intros x n H. destruct n as [|n].
  - unfold Qdiv. rewrite Q_of_nat_zero. simpl. rewrite Qmult_0_r. discriminate.
  - apply Qle_shift_div_r.
    + apply Qle_lt_trans with (Q_of_nat 0); [apply Qle_refl|].
      unfold Q_of_nat. rewrite <- Zlt_Qlt. lia.
    + rewrite Qmult_1_l. exact H.
Qed.

Lemma ratio_le_1 : forall a b, (a <= b)%nat -> ratio a b <= 1.
Proof. intros a b H. apply div_le_1, Q_of_nat_le, H. Qed.

Lemma ratio_self : forall a, (0 < a)%nat -> ratio a a == 1.
Proof. intros a Ha. unfold ratio. field. apply Q_of_nat_pos, Ha. Qed.

Lemma Qsum_app : forall f c1 c2, Qsum f (c1 ++ c2) == Qsum f c1 + Qsum f c2.
Proof.
  intros f c1 c2. induction c1 as [|r c1 IH]; simpl.
  - rewrite Qplus_0_l. reflexivity.
  - rewrite IH. ring.
Qed.

Lemma Qsum_perm : forall f c c', Permutation c c' -> Qsum f c == Qsum f c'.
Proof.
  intros f c c' H. induction H; simpl.
  - reflexivity.
  - rewrite IHPermutation. reflexivity.
  - ring.
  - rewrite IHPermutation1. exact IHPermutation2.
Qed.

Lemma Qsum_ext_in : forall f g c, (forall r, In r c -> f r == g r) -> Qsum f c == Qsum g c.
Proof.
  intros f g c. induction c as [|r c IH]; intros H; simpl; [reflexivity|].
  rewrite (H r (or_introl eq_refl)), IH; [reflexivity|].
  intros r' Hr'. apply H. right. exact Hr'.
Qed.

Lemma Qsum_le : forall f g c, (forall r, In r c -> f r <= g r) -> Qsum f c <= Qsum g c.
Proof.
  intros f g c. induction c as [|r c IH]; intros H; simpl; [apply Qle_refl|].
  apply Qplus_le_compat; [apply H; left; reflexivity|].
  apply IH. intros r' Hr'. apply H. right. exact Hr'.
Qed.

(* A count, read in Q, is the sum of its indicators. *)
Lemma Q_of_nat_count : forall p c,
  Q_of_nat (count p c) == Qsum (fun r => if p r then 1 else 0) c.
Proof.
  intros p c. induction c as [|r c IH]; simpl; [reflexivity|].
  rewrite Q_of_nat_add, IH. destruct (p r); reflexivity.
Qed.

Lemma Q_of_nat_length : forall c, Q_of_nat (length c) == Qsum (fun _ => 1) c.
Proof. intros c. rewrite <- count_true. apply Q_of_nat_count. Qed.
