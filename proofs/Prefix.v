(* EQ-1 and EQ-2: the first-error depth of a verdict sequence, and prefix executability.

   Verdicts v_1..v_T are booleans (true: action a_t was accepted in the state induced by
   a_1..a_{t-1}). By EQ-1 a prefix of length k is executable iff v_1..v_k are all accepted,
   and FED is the position of the first rejected verdict, or T + 1 when there is none. *)

From Coq Require Import List Arith Lia.
From Prefixexec Require Import Cohort.
Import ListNotations.
Local Open Scope nat_scope.

(* The prefix of length k is executable: v_1..v_k are all accepted. *)
Definition prefix_executable (v : list bool) (k : nat) : bool :=
  forallb (fun b => b) (firstn k v).

(* Position (1-based) of the first rejected verdict; length v + 1 when none is rejected. *)
Fixpoint fed (v : list bool) : nat :=
  match v with
  | [] => 1
  | true :: v' => S (fed v')
  | false :: _ => 1
  end.

Lemma fed_range : forall v, 1 <= fed v <= length v + 1.
Proof.
  intros v. induction v as [|b v IH]; simpl; [lia|]. destruct b; simpl; lia.
Qed.

Lemma prefix_executable_iff : forall v k,
  k <= length v -> (prefix_executable v k = true <-> k < fed v).
Proof.
  unfold prefix_executable. intros v. induction v as [|b v IH]; intros k Hk; simpl in *.
  - assert (k = 0) by lia. subst k. simpl. split; intros; [lia | reflexivity].
  - destruct k as [|k]; simpl.
    + split; intros; [destruct b; lia | reflexivity].
    + destruct b; simpl.
      * rewrite IH by lia. lia.
      * split; intros H; [discriminate H | lia].
Qed.

(* spec: EQ-2 *)
Theorem eq2_prefix_executable_iff : forall v k,
  1 <= k <= length v -> (prefix_executable v k = true <-> fed v > k).
Proof. intros v k Hk. rewrite prefix_executable_iff by lia. lia. Qed.

(* EQ-1, as the spec states it: FED is the least k in 1..T whose prefix is not executable,
   and T + 1 when every prefix up to the full trajectory is executable. The third clause
   with the second says exactly that (fed v = T + 1 makes every prefix 1..T executable). *)
(* spec: EQ-1 *)
Theorem fed_spec : forall v,
  1 <= fed v <= length v + 1
  /\ (forall k, 1 <= k < fed v -> prefix_executable v k = true)
  /\ (fed v <= length v -> prefix_executable v (fed v) = false).
Proof.
  intros v. pose proof (fed_range v) as Hr. split; [exact Hr|]. split.
  - intros k Hk. apply prefix_executable_iff; lia.
  - intros Hle. destruct (prefix_executable v (fed v)) eqn:E; [|reflexivity].
    apply prefix_executable_iff in E; lia.
Qed.

(* fed_spec determines FED: any depth with those three properties is fed v. *)
(* spec: EQ-1 *)
Theorem fed_unique : forall v f,
  1 <= f <= length v + 1 ->
  (forall k, 1 <= k < f -> prefix_executable v k = true) ->
  (f <= length v -> prefix_executable v f = false) ->
  f = fed v.
Proof.
  intros v f Hf Hbefore Hat. pose proof (fed_range v) as Hr.
  destruct (Nat.lt_trichotomy f (fed v)) as [Hlt|[Heq|Hgt]]; [|exact Heq|].
  - assert (E : prefix_executable v f = true) by (apply prefix_executable_iff; lia).
    rewrite Hat in E by lia. discriminate E.
  - assert (E : prefix_executable v (fed v) = true) by (apply Hbefore; lia).
    apply prefix_executable_iff in E; lia.
Qed.

(* EQ-1 in terms of the verdicts themselves: v_j is accepted for every j < FED, and v_FED is
   the first rejected one when FED <= T. *)
(* spec: EQ-1 *)
Theorem fed_first_rejected : forall v,
  (forall j, 1 <= j < fed v -> nth (j - 1) v true = true)
  /\ (fed v <= length v -> nth (fed v - 1) v true = false).
Proof.
  intros v. induction v as [|b v [IHbefore IHat]]; simpl.
  - split; intros; [lia | lia].
  - destruct b; simpl.
    + split.
      * intros j Hj. destruct j as [|[|j]]; simpl; [lia | reflexivity |].
        replace j with (S j - 1) by lia. apply IHbefore. lia.
      * intros Hle. pose proof (fed_range v). rewrite Nat.sub_0_r.
        destruct (fed v) as [|f] eqn:E; [lia|]. simpl.
        replace f with (S f - 1) by lia. apply IHat. lia.
    + split; intros; [lia | reflexivity].
Qed.

(* The rollout that replay of verdicts v produces, with success y and label l: it satisfies
   INV-FED-RANGE whenever the trajectory has at least one action slot (CONV-NOTOOL). *)
Definition of_verdicts (v : list bool) (y : bool) (l : option label) : rollout :=
  mk_rollout (length v) (fed v) y l.

Lemma of_verdicts_valid : forall v y l, v <> [] -> valid (of_verdicts v y l).
Proof.
  intros v y l Hv. unfold valid, of_verdicts. simpl. pose proof (fed_range v).
  destruct v as [|b v]; [contradiction|]. simpl in *. lia.
Qed.
