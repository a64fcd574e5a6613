(* The reference scorer that proofs/Extract.v extracts to OCaml (issue 19): the definitions of
   Cohort.v and Prefix.v, arranged as one condition object of `score --json`, plus the two
   pieces of the record format that the cohort definitions leave out (the rollout of a record's
   per-action verdicts, with CONV-NOTOOL, and the primary label of CONV-LABEL-ORDER).

   Everything the OCaml driver prints as a number comes from [score] below. Each field of
   [score c] is proven equal (as a rational, [==]) to the definition that the theorems of
   Metrics.v and Invariance.v are about ([score_spec]); the definitions added here for speed
   or for output ([Qsum_red], [AUC_PEC_red], [defined], the [Qred] of every ratio) are proven
   equal to the ones they stand for. The driver itself (JSON in and out, decimal and float
   display) is ordinary OCaml and is tested, not proven. *)

From Coq Require Import List Arith Lia QArith Qreduction.
From Prefixexec Require Import Cohort Prefix.
Import ListNotations.
Local Open Scope nat_scope.

(* ------------------------------------------------------------------------------------ *)
(* The primary label of a rejection (CONV-LABEL-ORDER)                                   *)

Lemma label_eqb_eq : forall a b, label_eqb a b = true <-> a = b.
Proof. intros [] []; simpl; split; intros H; congruence. Qed.

(* Position in the tie-break order schema, dependency, precondition, state_consistency,
   information. *)
Definition rank (l : label) : nat :=
  match l with
  | Schema => 0 | Dependency => 1 | Precondition => 2 | StateConsistency => 3 | Information => 4
  end.

(* The first label of [label_order] that the rejection names; None when it names none. *)
Definition primary_label (ls : list label) : option label :=
  find (fun l => existsb (label_eqb l) ls) label_order.

Lemma existsb_label_true : forall l ls, existsb (label_eqb l) ls = true -> In l ls.
Proof.
  intros l ls H. apply existsb_exists in H. destruct H as [x [Hx E]].
  apply label_eqb_eq in E. subst x. exact Hx.
Qed.

Lemma existsb_label_false : forall l ls, existsb (label_eqb l) ls = false -> ~ In l ls.
Proof.
  intros l ls H Hin.
  assert (E : existsb (label_eqb l) ls = true).
  { apply existsb_exists. exists l. split; [exact Hin | apply label_eqb_eq; reflexivity]. }
  congruence.
Qed.

(* The primary label is one of the given labels and comes first among them in the tie-break
   order; there is one exactly when at least one label is given. *)
Theorem primary_label_spec : forall ls,
  (primary_label ls = None <-> ls = [])
  /\ (forall l, primary_label ls = Some l -> In l ls /\ forall l', In l' ls -> rank l <= rank l').
Proof.
  intros ls. unfold primary_label, label_order. cbn [find].
  repeat match goal with
         | |- context [existsb (label_eqb ?l) ls] =>
             let E := fresh "E" in destruct (existsb (label_eqb l) ls) eqn:E
         end;
  repeat match goal with
         | H : existsb _ _ = true |- _ => apply existsb_label_true in H
         | H : existsb _ _ = false |- _ => apply existsb_label_false in H
         end;
  (split; [split; intros H |]).
  all: try discriminate.
  all: try (subst ls; contradiction).
  all: try reflexivity.
  all: try (destruct ls as [|l0 ls]; [reflexivity | exfalso; destruct l0; auto using in_eq]).
  all: intros l Hl; injection Hl as <-; split; [assumption|].
  all: intros [] Hin; simpl; solve [lia | contradiction].
Qed.

(* ------------------------------------------------------------------------------------ *)
(* Rollouts of records (REC-FORMAT, REC-OUTCOME, CONV-NOTOOL, CONV-REPLAY)               *)

(* INV-FED-RANGE as a test; the driver rejects a record whose rollout fails it. *)
Definition validb (r : rollout) : bool := (1 <=? T r) && (1 <=? FED r) && (FED r <=? T r + 1).

Lemma validb_spec : forall r, validb r = true <-> valid r.
Proof.
  intros r. unfold validb, valid. rewrite !andb_true_iff, !Nat.leb_le. tauto.
Qed.

(* A record with `outcome`: T and FED as given, the primary label of the given labels. *)
Definition rollout_of_outcome (t f : nat) (ls : list label) (y : bool) : rollout :=
  mk_rollout t f y (primary_label ls).

(* A record with `actions`, each (executable, labels): replayed verdicts v_t = executable.
   No action is the terminal no-tool action (CONV-NOTOOL). A failing rollout carries the
   primary label of its first rejected action; the actions after it count towards T. *)
Definition rollout_of_actions (acts : list (bool * list label)) (no_tool_allowed y : bool)
    : rollout :=
  match acts with
  | [] => mk_rollout 1 (if no_tool_allowed then 2 else 1) y None
  | _ :: _ =>
      let f := fed (map fst acts) in
      mk_rollout (length acts) f y
        (if f <=? length acts then primary_label (snd (nth (f - 1) acts (true, []))) else None)
  end.

(* CONV-NOTOOL: no action is one terminal action whose verdict is the permission. *)
Theorem rollout_of_no_tool : forall nt y,
  rollout_of_actions [] nt y = of_verdicts [nt] y None /\ valid (rollout_of_actions [] nt y).
Proof.
  intros [] y; split; try reflexivity; unfold valid; simpl; lia.
Qed.

(* EQ-1 and CONV-REPLAY: T is the number of actions, FED the [fed] of the verdicts (so every
   theorem of Prefix.v applies to it), the rollout is valid, and a failing rollout's label is
   the primary label of its first rejected action. *)
Theorem rollout_of_actions_spec : forall acts nt y,
  acts <> [] ->
  let r := rollout_of_actions acts nt y in
  T r = length acts /\ FED r = fed (map fst acts) /\ Y r = y /\ valid r
  /\ (FED r <= T r ->
      fst (nth (FED r - 1) acts (true, [])) = false
      /\ lab r = primary_label (snd (nth (FED r - 1) acts (true, []))))
  /\ (FED r = T r + 1 -> lab r = None).
Proof.
  intros acts nt y Hne. destruct acts as [|a acts']; [contradiction|].
  set (acts := a :: acts'). cbv zeta.
  assert (Hr : rollout_of_actions acts nt y
               = mk_rollout (length acts) (fed (map fst acts)) y
                   (if fed (map fst acts) <=? length acts
                    then primary_label (snd (nth (fed (map fst acts) - 1) acts (true, [])))
                    else None)) by reflexivity.
  rewrite Hr. unfold valid. cbn [T FED Y lab].
  assert (Hlen : 1 <= length acts) by (unfold acts; simpl; lia).
  pose proof (fed_range (map fst acts)) as Hrange. rewrite map_length in Hrange.
  pose proof (fed_first_rejected (map fst acts)) as [_ Hat]. rewrite map_length in Hat.
  split; [reflexivity|]. split; [reflexivity|]. split; [reflexivity|].
  split; [split; lia|]. split.
  - intros Hle. split.
    + specialize (Hat Hle). change true with (fst (true, @nil label)) in Hat at 1.
      rewrite map_nth in Hat. exact Hat.
    + apply Nat.leb_le in Hle. rewrite Hle. reflexivity.
  - intros Heq. destruct (Nat.leb_spec (fed (map fst acts)) (length acts)); [lia | reflexivity].
Qed.

Theorem rollout_of_outcome_spec : forall t f ls y,
  let r := rollout_of_outcome t f ls y in
  T r = t /\ FED r = f /\ Y r = y /\ lab r = primary_label ls
  /\ (validb r = true <-> 1 <= t /\ 1 <= f <= t + 1).
Proof.
  intros t f ls y. cbv zeta. rewrite validb_spec. unfold valid. simpl. tauto.
Qed.

(* ------------------------------------------------------------------------------------ *)
(* One condition object                                                                  *)

Local Open Scope Q_scope.

(* Qsum with each partial sum reduced: the same rational, without the denominators growing
   as the product of all horizons. *)
Fixpoint Qsum_red (f : rollout -> Q) (c : cohort) : Q :=
  match c with
  | [] => 0
  | r :: c' => Qred (f r + Qsum_red f c')
  end.

Lemma Qsum_red_eq : forall f c, Qsum_red f c == Qsum f c.
Proof.
  intros f c. induction c as [|r c IH]; cbn [Qsum_red Qsum]; [reflexivity|].
  transitivity (f r + Qsum_red f c); [apply Qred_correct|]. rewrite IH. reflexivity.
Qed.

Definition AUC_PEC_red (c : cohort) : Q := Qsum_red auc_term c / Q_of_nat (N c).

Lemma AUC_PEC_red_eq : forall c, AUC_PEC_red c == AUC_PEC c.
Proof. intros c. unfold AUC_PEC_red, AUC_PEC. rewrite Qsum_red_eq. reflexivity. Qed.

(* CONV-UNDEFINED: a ratio whose denominator [den] is 0 is undefined (JSON null). *)
Definition defined (den : nat) (x : Q) : option Q := if (den =? 0)%nat then None else Some x.

(* The depths k = 1 .. max T of the curves (CONV-PEC-RANGE). *)
Definition depths (c : cohort) : list nat := seq 1 (max_T c).

(* The labels of the output's `labels` object, in its order, `unlabelled` last. *)
Definition label_keys : list (option label) := map Some label_order ++ [None].

Record condition_report : Set := mk_report {
  rep_N : nat;
  rep_TER : Q;
  rep_AUC_PEC : Q;
  rep_mean_FED : Q;
  rep_success : Q;
  rep_RR : option Q;
  rep_RR_eligible : nat;
  rep_recovered : nat;
  rep_fully_executable : nat;
  rep_PEC : list Q;
  rep_PEC_elig : list (option Q);
  rep_n_k : list nat;
  rep_labels : list nat;
  rep_q : Q;
  rep_s : option Q;
  rep_r : option Q;
  rep_uninterrupted : nat
}.

(* Every ratio is reduced ([Qred]) so that the driver prints p/q in lowest terms, as Python's
   Fraction does. *)
Definition score (c : cohort) : condition_report :=
  mk_report
    (N c)
    (Qred (TER c))
    (Qred (AUC_PEC_red c))
    (Qred (mean_FED c))
    (Qred (success c))
    (defined (rr_eligible c) (Qred (RR c)))
    (rr_eligible c)
    (recovered c)
    (fully_executable c)
    (map (fun k => Qred (PEC c k)) (depths c))
    (map (fun k => defined (n_k c k) (Qred (PEC_elig c k))) (depths c))
    (map (n_k c) (depths c))
    (map (label_count c) label_keys)
    (Qred (TER c))
    (defined (fully_executable c) (Qred (s_exec c)))
    (defined (rr_eligible c) (Qred (RR c)))
    (uninterrupted c).

Lemma nth_depths : forall (A : Type) (f : nat -> A) n k d,
  (1 <= k <= n)%nat -> nth (k - 1) (map f (seq 1 n)) d = f k.
Proof.
  intros A f n k d Hk.
  rewrite nth_indep with (d' := f 0%nat) by (rewrite map_length, seq_length; lia).
  rewrite map_nth, seq_nth by lia. f_equal. lia.
Qed.

Lemma defined_spec : forall den x,
  (defined den x = None <-> den = 0%nat) /\ (forall y, defined den x = Some y -> y = x).
Proof.
  intros den x. unfold defined. destruct (Nat.eqb_spec den 0); split; try split;
    intros; try congruence; try lia.
Qed.

(* Every field of [score c] is the definition the theorems are about: counts equal, ratios
   equal as rationals, undefined exactly when CONV-UNDEFINED says, curves of length max T with
   entry k - 1 the value at depth k. *)
Theorem score_spec : forall c,
  rep_N (score c) = N c
  /\ rep_TER (score c) == TER c
  /\ rep_AUC_PEC (score c) == AUC_PEC c
  /\ rep_mean_FED (score c) == mean_FED c
  /\ rep_success (score c) == success c
  /\ (rep_RR (score c) = None <-> rr_eligible c = 0%nat)
  /\ (forall x, rep_RR (score c) = Some x -> x == RR c)
  /\ rep_RR_eligible (score c) = rr_eligible c
  /\ rep_recovered (score c) = recovered c
  /\ rep_fully_executable (score c) = fully_executable c
  /\ length (rep_PEC (score c)) = max_T c
  /\ length (rep_PEC_elig (score c)) = max_T c
  /\ length (rep_n_k (score c)) = max_T c
  /\ (forall k, (1 <= k <= max_T c)%nat ->
        nth (k - 1) (rep_PEC (score c)) 0 == PEC c k
        /\ nth (k - 1) (rep_n_k (score c)) 0%nat = n_k c k
        /\ (nth (k - 1) (rep_PEC_elig (score c)) None = None <-> n_k c k = 0%nat)
        /\ (forall x, nth (k - 1) (rep_PEC_elig (score c)) None = Some x -> x == PEC_elig c k))
  /\ rep_labels (score c) = map (label_count c) label_keys
  /\ rep_q (score c) == TER c
  /\ (rep_s (score c) = None <-> fully_executable c = 0%nat)
  /\ (forall x, rep_s (score c) = Some x -> x == s_exec c)
  /\ (rep_r (score c) = None <-> rr_eligible c = 0%nat)
  /\ (forall x, rep_r (score c) = Some x -> x == RR c)
  /\ rep_uninterrupted (score c) = uninterrupted c.
Proof.
  intros c. unfold score; cbn [rep_N rep_TER rep_AUC_PEC rep_mean_FED rep_success rep_RR
    rep_RR_eligible rep_recovered rep_fully_executable rep_PEC rep_PEC_elig rep_n_k rep_labels
    rep_q rep_s rep_r rep_uninterrupted].
  destruct (defined_spec (rr_eligible c) (Qred (RR c))) as [HRRn HRRs].
  destruct (defined_spec (fully_executable c) (Qred (s_exec c))) as [Hsn Hss].
  unfold depths. rewrite !map_length, !seq_length.
  repeat split; try reflexivity; try apply Qred_correct; try tauto.
  - rewrite Qred_correct. apply AUC_PEC_red_eq.
  - intros x Hx. apply HRRs in Hx. subst x. apply Qred_correct.
  - rewrite (nth_depths _ (fun k => Qred (PEC c k))) by assumption. apply Qred_correct.
  - apply nth_depths. assumption.
  - intros Hx. rewrite (nth_depths _ (fun k => defined (n_k c k) (Qred (PEC_elig c k))))
      in Hx by assumption. apply (defined_spec (n_k c k) (Qred (PEC_elig c k))). exact Hx.
  - intros Hx. rewrite (nth_depths _ (fun k => defined (n_k c k) (Qred (PEC_elig c k))))
      by assumption. apply (defined_spec (n_k c k) (Qred (PEC_elig c k))). exact Hx.
  - intros x Hx. rewrite (nth_depths _ (fun k => defined (n_k c k) (Qred (PEC_elig c k))))
      in Hx by assumption. apply (defined_spec (n_k c k)) in Hx. subst x. apply Qred_correct.
  - intros x Hx. apply Hss in Hx. subst x. apply Qred_correct.
  - intros x Hx. apply HRRs in Hx. subst x. apply Qred_correct.
Qed.
