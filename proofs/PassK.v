(* Reliability over repeated trials (issue 26, spec/passk.md): pass^k and pass@k of tau-bench,
   and their prefix analogues TER^k and TER@k, are monotone in k, and at k = 1 pass^k is the
   success rate and TER^k the trajectory executability rate of EQ-8.

   A task is its (n, c): n trials, c of them successes (or fully executable). pass^k averages
   C(c, k) / C(n, k) over the tasks; pass@k averages 1 - C(n - c, k) / C(n, k). The binomial
   coefficient is Pascal's recursion on nat, so every value is the exact rational the Python
   kernel builds with math.comb and fractions.Fraction. *)

From Coq Require Import List Arith Lia QArith.
From Prefixexec Require Import Cohort.
Import ListNotations.
Local Open Scope nat_scope.

(* ------------------------------------------------------------------------------------ *)
(* Binomial coefficients                                                                 *)

Fixpoint binom (n k : nat) : nat :=
  match n, k with
  | _, O => 1
  | O, S _ => 0
  | S n', S k' => binom n' k' + binom n' k
  end.

Lemma binom_0_r : forall n, binom n 0 = 1.
Proof. intros [|n]; reflexivity. Qed.

Lemma binom_gt : forall n k, n < k -> binom n k = 0.
Proof.
  induction n as [|n IH]; intros [|k] H; simpl; try lia.
  rewrite (IH k), (IH (S k)); lia.
Qed.

Lemma binom_1 : forall n, binom n 1 = n.
Proof. induction n as [|n IH]; [reflexivity|]. simpl. rewrite binom_0_r, IH. reflexivity. Qed.

Lemma binom_pos : forall n k, k <= n -> 0 < binom n k.
Proof.
  induction n as [|n IH]; intros [|k] H; simpl; try lia.
  pose proof (IH k ltac:(lia)). lia.
Qed.

(* The absorption identity C(n, k+1) (k+1) = C(n, k) (n - k), with natural subtraction. *)
Lemma binom_absorb : forall n k, binom n (S k) * S k = binom n k * (n - k).
Proof.
  induction n as [|n IH]; intros k.
  - simpl. lia.
  - destruct k as [|k].
    + rewrite binom_1. simpl. lia.
    + change (binom (S n) (S (S k))) with (binom n (S k) + binom n (S (S k))).
      change (binom (S n) (S k)) with (binom n k + binom n (S k)).
      replace (S n - S k) with (n - k) by lia.
      pose proof (IH k) as H1. pose proof (IH (S k)) as H2.
      destruct (Nat.le_gt_cases (S k) n) as [Hle|Hgt].
      * replace (n - S k) with (n - k - 1) in H2 by lia.
        remember (n - k) as m eqn:Em.
        destruct m as [|m]; [lia|].
        replace (S m - 1) with m in H2 by lia.
        nia.
      * rewrite (binom_gt n (S k)), (binom_gt n (S (S k))) by lia.
        replace (n - k) with 0 by lia. lia.
Qed.

(* C(c, k+1) C(n, k) <= C(c, k) C(n, k+1) for c <= n: the step of the monotonicity. *)
Lemma binom_ratio_step : forall n c k, c <= n ->
  binom c (S k) * binom n k <= binom c k * binom n (S k).
Proof.
  intros n c k Hc.
  apply (proj2 (Nat.mul_le_mono_pos_r _ _ (S k) ltac:(lia))).
  replace (binom c (S k) * binom n k * S k) with (binom c (S k) * S k * binom n k) by ring.
  replace (binom c k * binom n (S k) * S k) with (binom c k * (binom n (S k) * S k)) by ring.
  rewrite !binom_absorb.
  assert (c - k <= n - k) by lia.
  nia.
Qed.

(* ------------------------------------------------------------------------------------ *)
(* Rationals                                                                             *)

Local Open Scope Q_scope.

Lemma Q_of_nat_mul : forall a b, Q_of_nat (a * b) == Q_of_nat a * Q_of_nat b.
Proof. intros a b. unfold Q_of_nat. rewrite Nat2Z.inj_mul, inject_Z_mult. reflexivity. Qed.

Lemma Q_of_nat_lt0 : forall a, (0 < a)%nat -> 0 < Q_of_nat a.
Proof.
  intros a Ha. apply Qle_lt_trans with (Q_of_nat 0); [apply Qle_refl|].
  unfold Q_of_nat. rewrite <- Zlt_Qlt. lia.
Qed.

(* a / b <= c / d when a d <= c b, for positive b and d. *)
Lemma ratio_le_cross : forall a b c d, (0 < b)%nat -> (0 < d)%nat ->
  (a * d <= c * b)%nat -> ratio a b <= ratio c d.
Proof.
  intros a b c d Hb Hd H.
  assert (Pz : 0 < Q_of_nat b * Q_of_nat d)
    by (apply Qmult_lt_0_compat; apply Q_of_nat_lt0; assumption).
  apply (proj1 (Qmult_le_r _ _ _ Pz)).
  assert (E1 : ratio a b * (Q_of_nat b * Q_of_nat d) == Q_of_nat (a * d))
    by (unfold ratio; rewrite Q_of_nat_mul; field; apply Q_of_nat_pos; exact Hb).
  assert (E2 : ratio c d * (Q_of_nat b * Q_of_nat d) == Q_of_nat (c * b))
    by (unfold ratio; rewrite Q_of_nat_mul; field; apply Q_of_nat_pos; exact Hd).
  rewrite E1, E2. apply Q_of_nat_le. exact H.
Qed.

(* sum over a list of any elements (tasks) *)
Fixpoint QsumL {A : Type} (f : A -> Q) (l : list A) : Q :=
  match l with
  | [] => 0
  | x :: l' => f x + QsumL f l'
  end.

Lemma QsumL_le : forall {A : Type} (f g : A -> Q) l,
  (forall x, In x l -> f x <= g x) -> QsumL f l <= QsumL g l.
Proof.
  intros A f g l. induction l as [|x l IH]; intros H; simpl; [apply Qle_refl|].
  apply Qplus_le_compat; [apply H; left; reflexivity|].
  apply IH. intros y Hy. apply H. right. exact Hy.
Qed.

Lemma QsumL_ext : forall {A : Type} (f g : A -> Q) l,
  (forall x, In x l -> f x == g x) -> QsumL f l == QsumL g l.
Proof.
  intros A f g l. induction l as [|x l IH]; intros H; simpl; [reflexivity|].
  rewrite (H x (or_introl eq_refl)), IH; [reflexivity|].
  intros y Hy. apply H. right. exact Hy.
Qed.

(* ------------------------------------------------------------------------------------ *)
(* pass^k, pass@k, TER^k, TER@k                                                          *)

(* A task's (n, c): its trials and its successes (or fully executable trials). *)
Definition task_counts : Set := (nat * nat)%type.

Definition hat_term (k : nat) (t : task_counts) : Q := ratio (binom (snd t) k) (binom (fst t) k).
Definition at_term (k : nat) (t : task_counts) : Q :=
  1 - ratio (binom (fst t - snd t) k) (binom (fst t) k).

(* PASSK-HAT and PASSK-AT over the m tasks. *)
Definition pass_hat (ts : list task_counts) (k : nat) : Q :=
  QsumL (hat_term k) ts / Q_of_nat (length ts).
Definition pass_at (ts : list task_counts) (k : nat) : Q :=
  QsumL (at_term k) ts / Q_of_nat (length ts).

(* Every task has c <= n and at least k trials (pass^k is defined). *)
Definition defined_at (k : nat) (ts : list task_counts) : Prop :=
  Forall (fun t => (snd t <= fst t /\ k <= fst t)%nat) ts.

Lemma hat_term_step : forall k t, (snd t <= fst t)%nat -> (S k <= fst t)%nat ->
  hat_term (S k) t <= hat_term k t.
Proof.
  intros k [n c] Hc Hk. simpl in *. unfold hat_term. simpl.
  apply ratio_le_cross; [apply binom_pos; lia | apply binom_pos; lia |].
  apply binom_ratio_step. exact Hc.
Qed.

Lemma at_term_step : forall k t, (snd t <= fst t)%nat -> (S k <= fst t)%nat ->
  at_term k t <= at_term (S k) t.
Proof.
  intros k [n c] Hc Hk. simpl in *. unfold at_term. simpl.
  apply Qplus_le_compat; [apply Qle_refl|]. apply Qopp_le_compat.
  apply ratio_le_cross; [apply binom_pos; lia | apply binom_pos; lia |].
  apply binom_ratio_step. lia.
Qed.

(* A sequence that does not grow from k to k + 1 below k2 does not grow from k1 to k2. *)
Lemma antitone_chain : forall (g : nat -> Q) k1 k2, (k1 <= k2)%nat ->
  (forall k, (k < k2)%nat -> g (S k) <= g k) -> g k2 <= g k1.
Proof.
  intros g k1 k2 Hk. induction Hk as [|k2 Hk IH]; intros Hstep; [apply Qle_refl|].
  apply Qle_trans with (g k2); [apply Hstep; lia|].
  apply IH. intros k Hlt. apply Hstep. lia.
Qed.

(* Below k2, every task of a defined_at k2 list has c <= n and k + 1 <= n. *)
Lemma defined_at_step : forall ts k k2 t, (k < k2)%nat -> defined_at k2 ts -> In t ts ->
  (snd t <= fst t /\ S k <= fst t)%nat.
Proof.
  intros ts k k2 t Hk Hd Ht. unfold defined_at in Hd. rewrite Forall_forall in Hd.
  destruct (Hd t Ht). split; lia.
Qed.

(* spec: PASSK-MONO *)
Theorem pass_hat_antitone : forall ts k1 k2, (k1 <= k2)%nat -> defined_at k2 ts ->
  pass_hat ts k2 <= pass_hat ts k1.
Proof.
  intros ts k1 k2 Hk Hd. apply (antitone_chain (pass_hat ts)); [exact Hk|].
  intros k Hlt. unfold pass_hat. apply div_le_compat, QsumL_le. intros t Ht.
  destruct (defined_at_step ts k k2 t Hlt Hd Ht). apply hat_term_step; assumption.
Qed.

(* spec: PASSK-MONO *)
Theorem pass_at_monotone : forall ts k1 k2, (k1 <= k2)%nat -> defined_at k2 ts ->
  pass_at ts k1 <= pass_at ts k2.
Proof.
  intros ts k1 k2 Hk Hd.
  assert (H : - pass_at ts k2 <= - pass_at ts k1).
  { apply (antitone_chain (fun k => - pass_at ts k)); [exact Hk|].
    intros k Hlt. apply Qopp_le_compat. unfold pass_at. apply div_le_compat, QsumL_le.
    intros t Ht. destruct (defined_at_step ts k k2 t Hlt Hd Ht). apply at_term_step; assumption. }
  apply Qopp_le_compat in H. rewrite !Qopp_opp in H. exact H.
Qed.

(* ------------------------------------------------------------------------------------ *)
(* k = 1                                                                                 *)

(* pass^1 of one task is c / n, and pass@1 = pass^1. *)
Lemma hat_term_1 : forall t, hat_term 1 t == ratio (snd t) (fst t).
Proof. intros [n c]. unfold hat_term. simpl. rewrite !binom_1. reflexivity. Qed.

(* spec: PASSK-K1 *)
Theorem pass_at_1 : forall ts, defined_at 1 ts -> pass_at ts 1 == pass_hat ts 1.
Proof.
  intros ts Hd. unfold pass_at, pass_hat. apply Qdiv_comp; [|reflexivity].
  apply QsumL_ext. intros [n c] Ht. unfold defined_at in Hd. rewrite Forall_forall in Hd.
  destruct (Hd (n, c) Ht) as [Hc Hn]. simpl in *.
  unfold at_term, hat_term. simpl. rewrite !binom_1. unfold ratio.
  assert (E : Q_of_nat (n - c) == Q_of_nat n - Q_of_nat c).
  { replace n with ((n - c) + c)%nat at 2 by lia. rewrite Q_of_nat_add. ring. }
  rewrite E. field. apply Q_of_nat_pos. lia.
Qed.

(* The tasks of a multi-trial run: one cohort of trials per task. *)
Definition success_counts (tasks : list cohort) : list task_counts :=
  map (fun t => (N t, successes t)) tasks.
Definition executable_counts (tasks : list cohort) : list task_counts :=
  map (fun t => (N t, fully_executable t)) tasks.

Lemma QsumL_map : forall {A B : Type} (f : B -> Q) (g : A -> B) l,
  QsumL f (map g l) == QsumL (fun x => f (g x)) l.
Proof. intros A B f g l. induction l as [|x l IH]; simpl; [reflexivity|]. rewrite IH. reflexivity. Qed.

(* With every task run n times: sum_j count_j / n = (count over all trials) / n. *)
Lemma QsumL_ratio_concat : forall p n tasks,
  QsumL (fun t => ratio (count p t) n) tasks == ratio (count p (concat tasks)) n.
Proof.
  intros p n tasks. induction tasks as [|t tasks IH]; simpl.
  - unfold ratio. rewrite Q_of_nat_zero. unfold Qdiv. ring.
  - rewrite IH, count_app. unfold ratio. rewrite Q_of_nat_add. unfold Qdiv. ring.
Qed.

Lemma length_concat_const : forall (n : nat) (tasks : list cohort),
  Forall (fun t => N t = n) tasks -> length (concat tasks) = (length tasks * n)%nat.
Proof.
  intros n tasks H. induction H as [|t tasks Ht _ IH]; simpl; [reflexivity|].
  rewrite app_length, IH. unfold N in Ht. lia.
Qed.

(* pass^1 over the tasks of one counting predicate is that predicate's rate over every trial. *)
Lemma pass_hat_1_rate : forall p (n : nat) (tasks : list cohort),
  (0 < n)%nat -> tasks <> [] -> Forall (fun t => N t = n) tasks ->
  pass_hat (map (fun t => (N t, count p t)) tasks) 1
    == ratio (count p (concat tasks)) (N (concat tasks)).
Proof.
  intros p n tasks Hn Hne Hall. unfold pass_hat. rewrite map_length, QsumL_map.
  rewrite (QsumL_ext _ (fun t => ratio (count p t) n)).
  - rewrite QsumL_ratio_concat. unfold N. rewrite (length_concat_const n tasks Hall).
    unfold ratio. rewrite Q_of_nat_mul.
    assert (Hm : (0 < length tasks)%nat) by (destruct tasks; [contradiction | simpl; lia]).
    field. split; apply Q_of_nat_pos; lia.
  - intros t Ht. rewrite hat_term_1. simpl. rewrite Forall_forall in Hall.
    rewrite (Hall t Ht). reflexivity.
Qed.

(* spec: PASSK-K1 *)
Theorem pass_hat_1_success : forall (n : nat) (tasks : list cohort),
  (0 < n)%nat -> tasks <> [] -> Forall (fun t => N t = n) tasks ->
  pass_hat (success_counts tasks) 1 == success (concat tasks).
Proof. intros n tasks Hn Hne Hall. exact (pass_hat_1_rate Y n tasks Hn Hne Hall). Qed.

(* spec: PASSK-K1 *)
Theorem ter_hat_1_ter : forall (n : nat) (tasks : list cohort),
  (0 < n)%nat -> tasks <> [] -> Forall (fun t => N t = n) tasks ->
  pass_hat (executable_counts tasks) 1 == TER (concat tasks).
Proof.
  intros n tasks Hn Hne Hall.
  exact (pass_hat_1_rate (fun r => FED r =? T r + 1) n tasks Hn Hne Hall).
Qed.
